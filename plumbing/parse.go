package plumbing

import (
	"bytes"
	"fmt"
	"strings"
)

// OID is a git object name in hex (40 digits for SHA-1, 64 for SHA-256).
type OID string

// ZeroOID reports whether o is all zeros (git's "no object").
func (o OID) Zero() bool { return strings.Trim(string(o), "0") == "" }

// EmptyTree is the SHA-1 name of the tree with no entries.
const EmptyTree OID = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// Status is one entry of `git status --porcelain=v2 -z --no-renames`.
// Kind is '1' (changed), 'u' (unmerged), '?' (untracked) or '!' (ignored).
// XY is the two-letter status ('.' for unchanged); Sub is the submodule
// field ("N..." for a plain path); ModeW is the mode in the work tree in
// octal text ("000000" when deleted). ModeI and IndexOID are the index's
// side: for an unmerged path, stage 2 (ours). Path is the raw path, with a
// trailing '/' for an untracked nested repository. For an unmerged path,
// AddMode and AddOID are the stage `git add` takes the file's mode from
// where core.fileMode or core.symlinks is off: stage 2, else 1, else 3
// (git's index_name_pos_also_unmerged); "" for other kinds.
type Status struct {
	Kind     byte
	XY       string
	Sub      string
	ModeI    string
	ModeW    string
	IndexOID OID
	Path     string
	AddMode  string
	AddOID   OID
}

// ParseStatusV2 parses `git status --porcelain=v2 -z --no-renames` output.
// Header lines (`# ...`) are skipped. It fails on a record it cannot read,
// since a capture that misreads status would write a wrong tree.
func ParseStatusV2(out []byte) ([]Status, error) {
	var res []Status
	for len(out) > 0 {
		i := bytes.IndexByte(out, 0)
		if i < 0 {
			return nil, fmt.Errorf("status: record without NUL terminator")
		}
		rec := string(out[:i])
		out = out[i+1:]
		if rec == "" {
			continue
		}
		switch rec[0] {
		case '#':
			continue
		case '?', '!':
			if len(rec) < 3 || rec[1] != ' ' {
				return nil, fmt.Errorf("status: bad record %q", rec)
			}
			res = append(res, Status{Kind: rec[0], Path: rec[2:]})
		case '1':
			// 1 XY sub mH mI mW hH hI path
			f := strings.SplitN(rec, " ", 9)
			if len(f) != 9 || len(f[1]) != 2 {
				return nil, fmt.Errorf("status: bad record %q", rec)
			}
			res = append(res, Status{Kind: '1', XY: f[1], Sub: f[2], ModeI: f[4], ModeW: f[5], IndexOID: OID(f[7]), Path: f[8]})
		case 'u':
			// u XY sub m1 m2 m3 mW h1 h2 h3 path
			f := strings.SplitN(rec, " ", 11)
			if len(f) != 11 || len(f[1]) != 2 {
				return nil, fmt.Errorf("status: bad record %q", rec)
			}
			st := Status{Kind: 'u', XY: f[1], Sub: f[2], ModeI: f[4], ModeW: f[6], IndexOID: OID(f[8]), Path: f[10]}
			for _, k := range []int{1, 0, 2} { // stages 2, 1, 3
				if f[3+k] != "000000" {
					st.AddMode, st.AddOID = f[3+k], OID(f[7+k])
					break
				}
			}
			res = append(res, st)
		case '2':
			// A rename record has a second NUL-terminated path; --no-renames
			// should prevent it, but skip the original path if one comes.
			f := strings.SplitN(rec, " ", 10)
			if len(f) != 10 || len(f[1]) != 2 {
				return nil, fmt.Errorf("status: bad record %q", rec)
			}
			j := bytes.IndexByte(out, 0)
			if j < 0 {
				return nil, fmt.Errorf("status: rename without original path")
			}
			orig := string(out[:j])
			out = out[j+1:]
			res = append(res, Status{Kind: '1', XY: f[1], Sub: f[2], ModeI: f[4], ModeW: f[5], IndexOID: OID(f[7]), Path: f[9]})
			res = append(res, Status{Kind: '1', XY: ".D", Sub: "N...", ModeW: "000000", Path: orig})
		default:
			return nil, fmt.Errorf("status: unknown record %q", rec)
		}
	}
	return res, nil
}

// StatusBranch returns the commit and the branch the header of `git
// status --porcelain=v2 -z --branch` names (`# branch.oid`, `# branch.head`),
// as they are written: "(initial)" for an unborn HEAD, "(detached)" for a
// detached one; "" for a header that is not there.
func StatusBranch(out []byte) (oid, branch string) {
	for len(out) > 0 && out[0] == '#' {
		i := bytes.IndexByte(out, 0)
		if i < 0 {
			break
		}
		rec := string(out[:i])
		out = out[i+1:]
		if v, ok := strings.CutPrefix(rec, "# branch.oid "); ok {
			oid = v
		} else if v, ok := strings.CutPrefix(rec, "# branch.head "); ok {
			branch = v
		}
	}
	return oid, branch
}

// IndexEntry is one line of `git ls-files -s -v -z`: Tag is the -v tag
// ('H' cached, 'S' skip-worktree, lower case for assume-unchanged, ...),
// Mode the octal mode text, Stage 0-3.
type IndexEntry struct {
	Tag   byte
	Mode  string
	OID   OID
	Stage byte
	Path  string
}

// AssumeUnchanged reports whether the entry has the assume-unchanged bit.
func (e IndexEntry) AssumeUnchanged() bool { return e.Tag >= 'a' && e.Tag <= 'z' }

// SkipWorktree reports whether the entry has the skip-worktree bit.
func (e IndexEntry) SkipWorktree() bool { return e.Tag == 'S' || e.Tag == 's' }

// ParseLsFiles parses `git ls-files -s -v -z` ("T mode oid stage\tpath\0").
func ParseLsFiles(out []byte) ([]IndexEntry, error) {
	var res []IndexEntry
	for len(out) > 0 {
		i := bytes.IndexByte(out, 0)
		if i < 0 {
			return nil, fmt.Errorf("ls-files: record without NUL terminator")
		}
		rec := out[:i]
		out = out[i+1:]
		tab := bytes.IndexByte(rec, '\t')
		if tab < 2 || len(rec) < 4 || rec[1] != ' ' {
			return nil, fmt.Errorf("ls-files: bad record %q", rec)
		}
		f := strings.Split(string(rec[2:tab]), " ")
		if len(f) != 3 || len(f[2]) != 1 {
			return nil, fmt.Errorf("ls-files: bad record %q", rec)
		}
		res = append(res, IndexEntry{Tag: rec[0], Mode: f[0], OID: OID(f[1]), Stage: f[2][0] - '0', Path: string(rec[tab+1:])})
	}
	return res, nil
}

// TreeChange is one entry of `git diff-tree -r -z --no-renames` raw output:
// the modes and objects on both sides and the status letter (A, D, M, T).
type TreeChange struct {
	SrcMode, DstMode string
	Src, Dst         OID
	Status           byte
	Path             string
}

// ParseDiffTreeRaw parses `git diff-tree -r -z --no-renames` (raw format):
// ":srcmode dstmode src dst S\0path\0" per entry.
func ParseDiffTreeRaw(out []byte) ([]TreeChange, error) {
	var res []TreeChange
	for len(out) > 0 {
		i := bytes.IndexByte(out, 0)
		if i < 0 {
			return nil, fmt.Errorf("diff-tree: record without NUL terminator")
		}
		head := string(out[:i])
		out = out[i+1:]
		if head == "" {
			continue
		}
		if head[0] != ':' {
			// diff-tree prints the commit id first when given commits.
			continue
		}
		f := strings.Split(head[1:], " ")
		if len(f) != 5 || len(f[4]) < 1 {
			return nil, fmt.Errorf("diff-tree: bad record %q", head)
		}
		j := bytes.IndexByte(out, 0)
		if j < 0 {
			return nil, fmt.Errorf("diff-tree: record without path")
		}
		path := string(out[:j])
		out = out[j+1:]
		res = append(res, TreeChange{SrcMode: f[0], DstMode: f[1], Src: OID(f[2]), Dst: OID(f[3]), Status: f[4][0], Path: path})
	}
	return res, nil
}

// LsTreeEntry is one entry of `git ls-tree -z [-r] [-l]`.
type LsTreeEntry struct {
	Mode string
	Type string
	OID  OID
	Size int64 // -1 when not asked for or not a blob
	Path string
}

// ParseLsTree parses `git ls-tree -z` with or without -l.
func ParseLsTree(out []byte) ([]LsTreeEntry, error) {
	var res []LsTreeEntry
	for len(out) > 0 {
		i := bytes.IndexByte(out, 0)
		if i < 0 {
			return nil, fmt.Errorf("ls-tree: record without NUL terminator")
		}
		rec := string(out[:i])
		out = out[i+1:]
		meta, path, ok := strings.Cut(rec, "\t")
		if !ok {
			return nil, fmt.Errorf("ls-tree: bad record %q", rec)
		}
		f := strings.Fields(meta)
		if len(f) < 3 {
			return nil, fmt.Errorf("ls-tree: bad record %q", rec)
		}
		e := LsTreeEntry{Mode: f[0], Type: f[1], OID: OID(f[2]), Size: -1, Path: path}
		if len(f) == 4 && f[3] != "-" {
			fmt.Sscan(f[3], &e.Size)
		}
		res = append(res, e)
	}
	return res, nil
}

// NulList joins paths as NUL-terminated records, for --stdin -z inputs.
func NulList(paths []string) []byte {
	var b bytes.Buffer
	for _, p := range paths {
		b.WriteString(p)
		b.WriteByte(0)
	}
	return b.Bytes()
}

// Literal makes a pathspec that matches exactly p, whatever it contains
// (a leading ':', glob characters): CASES BR-38.
func Literal(p string) string { return ":(literal)" + p }
