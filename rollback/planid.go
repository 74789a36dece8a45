package rollback

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"
	"unicode/utf8"
)

// PlanVersion is the prefix of the plan ids this toolkit makes and
// accepts. RFC 7.2's p1 digests the checkpoint id, the choices and S's
// tree and HEAD; p2 also binds the agent, the target commit and every
// decision the plan showed (docs/json.md, "The plan id"), because the
// decisions come from the log as well as from S: two agents' k2 in one
// tree had one p1 id, and a checkpoint or a clean between the calls
// changed what the real call did while its p1 id still matched.
const PlanVersion = "p2"

// planDoc is the document a p2 plan id digests: the fields are declared
// in the order their JSON names sort, at every level, so that
// encoding/json writes the members sorted, as RFC 8785 (JCS) orders them.
type planDoc struct {
	Agent        string          `json:"agent"`
	Checkpoint   string          `json:"checkpoint"`
	Conversation docConversation `json:"conversation"`
	Guarded      bool            `json:"guarded"`
	KeepHead     bool            `json:"keep_head"`
	Outside      *string         `json:"outside"`
	// Pathspec is the pathspec a rollback is narrowed to, as given,
	// absent when it is not, so the ids of whole-tree plans stay what
	// they were before plans could be narrowed.
	Pathspec   []string  `json:"pathspec,omitempty"`
	Repos      []docRepo `json:"repos"`
	Restore    string    `json:"restore"`
	SharedWith []string  `json:"shared_with"`
}

type docConversation struct {
	Drops       []string `json:"drops"`
	Harness     string   `json:"harness,omitempty"`
	Rewinds     bool     `json:"rewinds"`
	ThroughTurn *string  `json:"through_turn"`
}

type docRepo struct {
	Commit string    `json:"commit"`
	Files  []docFile `json:"files"`
	Head   docHead   `json:"head"`
	Index  string    `json:"index,omitempty"`
	Left   []docLeft `json:"left"`
	Repo   string    `json:"repo"`
	Tree   string    `json:"tree"`
}

type docHead struct {
	Commits int     `json:"commits"`
	From    *string `json:"from"`
	Moves   bool    `json:"moves"`
	Since   int     `json:"since,omitempty"`
	To      *string `json:"to"`
}

type docFile struct {
	Change    string `json:"change"`
	Class     string `json:"class"`
	Path      string `json:"path"`
	PathBytes []byte `json:"path_bytes,omitempty"`
}

type docLeft struct {
	Detail    string `json:"detail,omitempty"`
	Path      string `json:"path"`
	PathBytes []byte `json:"path_bytes,omitempty"`
	Reason    string `json:"reason"`
}

// PlanDocument is the canonical JSON a p2 plan id digests (docs/json.md
// "The plan id"): from the plan's result, the members agent, checkpoint,
// conversation {drops, harness, rewinds, through_turn}, restore and
// shared_with, and of each repo commit, files, head, index, left, repo and
// tree; guarded; and the choices as given (outside null when not given,
// keep_head, and pathspec, absent while empty). files and left are sorted
// by the bytes of their paths; a path that is not UTF-8 carries its bytes
// in path_bytes, as in the result. The text is RFC 8785's canonical form:
// members sorted, no white space, strings escaped only where JSON must
// (", \ and the control characters, with \b \t \n \f \r for theirs and
// \u00xx for the others), everything else as UTF-8 (U+2028 and U+2029
// included, and U+FFFD for a byte that is not UTF-8).
func PlanDocument(res *Result, guarded bool, o Options) []byte {
	d := planDoc{Agent: res.Agent, Checkpoint: res.Checkpoint, Guarded: guarded, KeepHead: o.KeepHead,
		Restore: res.Restore, SharedWith: nonNil(res.SharedWith),
		Conversation: docConversation{Drops: nonNil(res.Conversation.Drops), Harness: res.Conversation.Harness,
			Rewinds: res.Conversation.Rewinds, ThroughTurn: res.Conversation.ThroughTurn}}
	if o.Outside != "" {
		out := o.Outside
		d.Outside = &out
	}
	if len(res.Pathspec) > 0 {
		d.Pathspec = res.Pathspec
	}
	for _, r := range res.Repos {
		dr := docRepo{Commit: r.Commit, Repo: r.Repo, Tree: r.Tree, Index: r.Index, Files: []docFile{}, Left: []docLeft{},
			Head: docHead{Commits: r.Head.Commits, From: r.Head.From, Moves: r.Head.Moves, Since: r.Head.Since, To: r.Head.To}}
		for _, f := range r.Files {
			dr.Files = append(dr.Files, docFile{Change: f.Change, Class: f.Class, Path: f.Path, PathBytes: pathBytes(f.Path)})
		}
		for _, l := range r.Left {
			dr.Left = append(dr.Left, docLeft{Detail: l.Detail, Path: l.Path, PathBytes: pathBytes(l.Path), Reason: l.Reason})
		}
		sort.Slice(dr.Files, func(i, j int) bool { return dr.Files[i].Path < dr.Files[j].Path })
		sort.Slice(dr.Left, func(i, j int) bool { return dr.Left[i].Path < dr.Left[j].Path })
		d.Repos = append(d.Repos, dr)
	}
	sort.Slice(d.Repos, func(i, j int) bool { return d.Repos[i].Repo < d.Repos[j].Repo })
	return canonical(d)
}

// PlanID is the plan id of a PlanDocument: "p2-" and the first 16 hex
// digits of its SHA-256.
func PlanID(doc []byte) string {
	sum := sha256.Sum256(doc)
	return PlanVersion + "-" + hex.EncodeToString(sum[:])[:16]
}

// pathBytes is path's bytes when it is not UTF-8 (the path_bytes
// convention), else nil.
func pathBytes(path string) []byte {
	if utf8.ValidString(path) {
		return nil
	}
	return []byte(path)
}

// canonical encodes d (a planDoc, whose fields are in sorted order) as RFC
// 8785 does: encoding/json with HTML escaping off, every string made
// valid UTF-8 first (the bytes are in path_bytes), and the \u2028 and
// \u2029 escapes, which encoding/json writes and RFC 8785 does not, made
// the characters again.
func canonical(d planDoc) []byte {
	valid(&d)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		panic("rollback: encoding a plan document: " + err.Error()) // only strings, bools, ints
	}
	return unescapeSeparators(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// valid replaces each byte that is not UTF-8 in d's strings with U+FFFD,
// as encoding/json would, but as the character and not its escape.
func valid(d *planDoc) {
	fix := func(s *string) { *s = strings.ToValidUTF8(*s, "\uFFFD") }
	for i := range d.Repos {
		for j := range d.Repos[i].Files {
			fix(&d.Repos[i].Files[j].Path)
		}
		for j := range d.Repos[i].Left {
			fix(&d.Repos[i].Left[j].Path)
			fix(&d.Repos[i].Left[j].Detail)
		}
	}
}

// unescapeSeparators turns each \u2028 and \u2029 escape of encoded JSON
// back into its character. Escapes are read in pairs from the left, so
// the text \\u2028 (a backslash, then "u2028") is left as it is.
func unescapeSeparators(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u202`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			out = append(out, b[i])
			continue
		}
		if rest := b[i+1:]; bytes.HasPrefix(rest, []byte("u2028")) || bytes.HasPrefix(rest, []byte("u2029")) {
			if rest[4] == '8' {
				out = append(out, "\u2028"...)
			} else {
				out = append(out, "\u2029"...)
			}
			i += 5
			continue
		}
		out = append(out, b[i], b[i+1])
		i++
	}
	return out
}
