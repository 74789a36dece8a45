package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/venom-org/git-venom/plumbing"
)

// Record type names (RFC 11.2 log records, plus the toolkit's own of
// DESIGN.md section 3).
const (
	TypeCheckpointTaken  = "checkpoint.taken"
	TypeCheckpointReused = "checkpoint.reused"
	TypeCheckpointFailed = "checkpoint.failed"
	TypeCheckpointPruned = "checkpoint.pruned"
	TypeRollbackStarted  = "rollback.started"
	TypeRollbackEnded    = "rollback.ended"
	TypeAgentRegistered  = "agent.registered"
	TypeTurnStarted      = "turn.started"
	TypeTurnEnded        = "turn.ended"
	TypeEdit             = "edit"
	TypeNotePending      = "note.pending"
	TypeNoteDelivered    = "note.delivered"
	TypeAgentBinding     = "agent.binding"
	TypeAgentArchived    = "agent.archived"
)

// RepoState is one member of a checkpoint's repos[] (RFC 4.2): the tree it
// was taken in and what it holds. Tree is the toolkit's addition (the
// commit's tree), so dedup and plans need no extra git call.
type RepoState struct {
	Repo       string               `json:"repo"`
	Path       string               `json:"path"`
	Commit     string               `json:"commit"`
	Tree       string               `json:"tree"`
	Head       *string              `json:"head"`
	Branch     string               `json:"branch,omitempty"`
	Skipped    []plumbing.Skip      `json:"skipped"`
	Submodules []plumbing.Submodule `json:"submodules"`
}

// Checkpoint is the checkpoint.taken record (RFC 4.2). Turn is the turn the
// capture belongs to (nil between turns); ThroughTurn the last turn that had
// ended (RFC 3.3).
type Checkpoint struct {
	Agent       string  `json:"agent"`
	Checkpoint  string  `json:"checkpoint"`
	Reason      string  `json:"reason"`
	Turn        *string `json:"turn"`
	ThroughTurn *string `json:"through_turn"`
	At          string  `json:"at"`
	MidTurn     bool    `json:"mid_turn"`
	Overlap     bool    `json:"overlap"`
	Label       string  `json:"label,omitempty"`
	// ToolCall marks a per-tool-call checkpoint (a hook's capture before
	// a tool call, reason manual): retention counts it with the turn
	// checkpoints (venom.checkpoints.keep), not with a person's manual
	// ones, which only age out.
	ToolCall bool        `json:"tool_call,omitempty"`
	Repos    []RepoState `json:"repos"`
}

// RepoEntry is the member of c.Repos whose repo is rel (RFC 4.2 repos[]:
// "." for the top, a submodule's path relative to the top), or nil when
// the checkpoint does not name it (a submodule added since, or one the
// checkpoint was taken without).
func (c *Checkpoint) RepoEntry(rel string) *RepoState {
	for i := range c.Repos {
		if c.Repos[i].Repo == rel || (rel == "." && i == 0 && c.Repos[i].Repo == "") {
			return &c.Repos[i]
		}
	}
	return nil
}

// Reused is the checkpoint.reused record (RFC 3.2): a capture that found
// the same tree and HEAD as the agent's latest checkpoint.
type Reused struct {
	Agent       string  `json:"agent"`
	Checkpoint  string  `json:"checkpoint"`
	Reason      string  `json:"reason"`
	Turn        *string `json:"turn"`
	ThroughTurn *string `json:"through_turn"`
	At          string  `json:"at"`
	Label       string  `json:"label,omitempty"`
	Path        string  `json:"path"`
}

// Failed is the checkpoint.failed record (RFC 11.2 agent.checkpoint_failed):
// Code is an RFC 11.3 code.
type Failed struct {
	Agent   string  `json:"agent"`
	Reason  string  `json:"reason"`
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Turn    *string `json:"turn,omitempty"`
	Repo    string  `json:"repo,omitempty"`
	Path    string  `json:"path,omitempty"`
}

// Pruned is the checkpoint.pruned record (RFC 5.2).
type Pruned struct {
	Agent       string   `json:"agent"`
	Checkpoints []string `json:"checkpoints"`
}

// TurnStarted opens turn Turn of Agent. NoStart marks a turn opened only by
// its end (a turn_end with no open turn): it had no turn_start capture, so
// its window is a gap (RFC 7.3).
type TurnStarted struct {
	Agent          string `json:"agent"`
	Turn           string `json:"turn"`
	Checkpoint     string `json:"checkpoint,omitempty"`
	NoStart        bool   `json:"no_start,omitempty"`
	Harness        string `json:"harness,omitempty"`
	HarnessSession string `json:"harness_session,omitempty"`
	HarnessTurn    string `json:"harness_turn,omitempty"`
}

// TurnEnded closes turn Turn. Synthetic marks an end the toolkit made
// because a turn_start came while the turn was still open (an interrupt
// fires no hook), as RFC-0019's synthetic end. Harness and the harness
// ids, when given, are the turn's from then on, as those its start gave
// (a turn opened without --harness keeps the one its end names).
type TurnEnded struct {
	Agent          string `json:"agent"`
	Turn           string `json:"turn"`
	Checkpoint     string `json:"checkpoint,omitempty"`
	Synthetic      bool   `json:"synthetic,omitempty"`
	Harness        string `json:"harness,omitempty"`
	HarnessSession string `json:"harness_session,omitempty"`
	HarnessTurn    string `json:"harness_turn,omitempty"`
	HarnessEnd     string `json:"harness_end,omitempty"`
	// HarnessEndPending is logged instead of HarnessEnd when the harness's
	// transcript had not caught up with the turn when it ended: what a
	// rollback needs to find the turn's end in it later.
	HarnessEndPending *EndPending `json:"harness_end_pending,omitempty"`
}

// EndPending says where to find a turn's harness_end once the harness's
// transcript has caught up (HARNESS-HOOKS.md 1.8: Claude Code writes it
// asynchronously). Transcript is the transcript's path; After the uuid of
// the last assistant entry it held when the turn ended ("" for none), so
// the turn's end comes after it; TextSHA256 the hex SHA-256 of the turn's
// last assistant message, trimmed of white space ("" when the harness did
// not give it). The message itself is not stored.
type EndPending struct {
	Transcript string `json:"transcript"`
	After      string `json:"after,omitempty"`
	TextSHA256 string `json:"text_sha256,omitempty"`
}

// AgentRegistered records an agent's first capture in a tree and its
// isolation (in_place, worktree or copy; RFC 6).
type AgentRegistered struct {
	Agent     string `json:"agent"`
	Path      string `json:"path"`
	Isolation string `json:"isolation"`
}

// RollbackStarted is logged after the safety checkpoint exists (RFC 7.4
// step 2). Perms, when not empty, is a JSON list of PathPerm: the
// permission bits of the files and directories the rollback may remove, or
// rewrite with another git mode, where they are not what git would give
// them back under the umask (checkpoints hold only git's 644 and 755), so
// that a rollback to Safety (the undo) can (CASES BR-41). It is kept as
// raw JSON, decoded only by PermList: a replay of the log, on every
// command, skips it.
type RollbackStarted struct {
	Agent      string          `json:"agent"`
	Checkpoint string          `json:"checkpoint"`
	Safety     string          `json:"safety"`
	Restore    string          `json:"restore"`
	Plan       string          `json:"plan"`
	Path       string          `json:"path"`
	Perms      json.RawMessage `json:"perms,omitempty"`
	// Index is the tree of the user's index as the rollback found it
	// (plumbing.IndexTree), logged when the rollback moves HEAD and so
	// resets the index: the undo, a rollback to Safety that moves HEAD
	// back, sets the index to it and gives the staged versions back. The
	// safety checkpoint's commit has a commit of it as second parent, so
	// it lives as long as the checkpoint. "" (left out) otherwise.
	Index string `json:"index,omitempty"`
	// Indexes is Index for each submodule whose HEAD the rollback moves
	// (issue 18), by its repo (path relative to the top). Perms' paths
	// are relative to the top, a submodule's files' included.
	Indexes map[string]string `json:"indexes,omitempty"`
	// Created is the files the rollback writes where its S holds nothing
	// and S's own ignore rules ignore the path (CreatedPaths), encoded;
	// left out by a rollback that logged none (before it was logged, or
	// with more than MaxCreated). The first rollback to Safety (the undo)
	// deletes those still as this rollback wrote them, although its
	// target ignores them (ignored_at_target): nothing was there before.
	Created json.RawMessage `json:"created,omitempty"`
}

// MaxCreated is the most paths rollback.started lists in created: a
// rollback that creates more ignored files than this logs none, and its
// undo keeps them all as ignored_at_target.
const MaxCreated = 4096

// CreatedPaths is rollback.started's created member: Paths relative to
// the top of the tree, every repository's, in the order the rollback
// writes them, with "paths_bytes" beside them when one is not valid UTF-8
// (plumbing.MarshalPathsBytes). An empty list is a rollback that created
// no such file.
type CreatedPaths struct {
	Paths []string `json:"paths"`
}

// MarshalJSON writes the shape above.
func (c CreatedPaths) MarshalJSON() ([]byte, error) {
	type plain CreatedPaths
	if c.Paths == nil {
		c.Paths = []string{}
	}
	return plumbing.MarshalPathsBytes(plain(c), c.Paths)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *CreatedPaths) UnmarshalJSON(b []byte) error {
	type plain CreatedPaths
	return plumbing.UnmarshalPathsBytes(b, (*plain)(c), func(v *plain) *[]string { return &v.Paths })
}

// CreatedList decodes Created: the paths, and false when the record
// lists none (a rollback before it was logged, or one over MaxCreated),
// so the undo cannot tell which ignored files the rollback created.
func (r RollbackStarted) CreatedList() ([]string, bool, error) {
	if len(r.Created) == 0 {
		return nil, false, nil
	}
	var c CreatedPaths
	if err := json.Unmarshal(r.Created, &c); err != nil {
		return nil, false, err
	}
	return c.Paths, true, nil
}

// EncodeCreated is the Created member for paths: nil (left out) when
// there are more than MaxCreated.
func EncodeCreated(paths []string) (json.RawMessage, error) {
	if len(paths) > MaxCreated {
		return nil, nil
	}
	return json.Marshal(CreatedPaths{Paths: paths})
}

// PermList decodes Perms (nil when there are none).
func (r RollbackStarted) PermList() ([]PathPerm, error) {
	if len(r.Perms) == 0 {
		return nil, nil
	}
	var ps []PathPerm
	if err := json.Unmarshal(r.Perms, &ps); err != nil {
		return nil, err
	}
	return ps, nil
}

// EncodePerms is the Perms member for ps: nil (left out) when ps is empty.
func EncodePerms(ps []PathPerm) (json.RawMessage, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	return json.Marshal(ps)
}

// PathPerm is the permission bits of one file (or, with Dir, directory) of
// the tree and the group that owns it: Perm in octal as chmod takes it
// ("0600"; a directory's may carry the setgid and sticky bits, "2750",
// "1777"), Gid a number. Path is relative to the top of the tree, with
// "path_bytes" beside it when it is not valid UTF-8
// (plumbing.MarshalPathBytes).
type PathPerm struct {
	Path string  `json:"path"`
	Perm string  `json:"perm"`
	Dir  bool    `json:"dir,omitempty"`
	Gid  *uint32 `json:"gid,omitempty"`
	// Kept marks the bits of a file the rollback rewrote with its own git
	// mode, which it keeps: an undo gives them back only where no file is
	// (a kill left it in the backup directory), never over a chmod made
	// since.
	Kept bool `json:"kept,omitempty"`
}

// MarshalJSON writes the shape above, plus path_bytes for a path that is
// not valid UTF-8.
func (p PathPerm) MarshalJSON() ([]byte, error) {
	type plain PathPerm
	return plumbing.MarshalPathBytes(plain(p), p.Path)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *PathPerm) UnmarshalJSON(b []byte) error {
	type plain PathPerm
	return plumbing.UnmarshalPathBytes(b, (*plain)(p), func(v *plain) *string { return &v.Path })
}

// FileMode is Perm as os.FileMode bits: the permission bits, and for a
// directory the setgid and sticky bits (a file's special bits are never
// given back). ok is false when Perm is not an octal number of at most
// 07777.
func (p PathPerm) FileMode() (mode os.FileMode, ok bool) {
	n, err := strconv.ParseUint(p.Perm, 8, 32)
	if err != nil || n > 0o7777 {
		return 0, false
	}
	mode = os.FileMode(n & 0o777)
	if p.Dir && n&0o2000 != 0 {
		mode |= os.ModeSetgid
	}
	if p.Dir && n&0o1000 != 0 {
		mode |= os.ModeSticky
	}
	return mode, true
}

// OctalPerm is the Perm string for mode: its permission bits, and its
// setgid and sticky bits when dir.
func OctalPerm(mode os.FileMode, dir bool) string {
	n := uint32(mode.Perm())
	if dir && mode&os.ModeSetgid != 0 {
		n |= 0o2000
	}
	if dir && mode&os.ModeSticky != 0 {
		n |= 0o1000
	}
	return fmt.Sprintf("%04o", n)
}

// RollbackEnded closes a rollback (RFC 7.4 step 7, 7.6).
type RollbackEnded struct {
	Agent      string   `json:"agent"`
	Checkpoint string   `json:"checkpoint"`
	Safety     string   `json:"safety"`
	Restore    string   `json:"restore"`
	OK         bool     `json:"ok"`
	Code       string   `json:"code,omitempty"`
	After      string   `json:"after,omitempty"`
	Drops      []string `json:"drops,omitempty"`
	Path       string   `json:"path"`
	// Rescued is the ref of the saves a person made while the rollback
	// ran that it had replaced, kept there (refs/venom/rescued/...), when
	// there were any.
	Rescued string `json:"rescued,omitempty"`
}

// Edit records paths an edit tool wrote during an agent's open turn (the
// edit tool calls of RFC 7.3). Paths are relative to the top of the tree
// Path, and any bytes but NUL, as git's: a record with a path that is not
// valid UTF-8 also carries "paths_bytes", every path's bytes in base64 in
// the order of "paths" (plumbing.MarshalPathsBytes), and is read back from
// it. A record whose paths are all UTF-8 has exactly the shape above.
type Edit struct {
	Agent string   `json:"agent"`
	Turn  string   `json:"turn"`
	Paths []string `json:"paths"`
	Path  string   `json:"path"`
}

// MarshalJSON writes the edit record (RFC 7.3), plus paths_bytes when a
// path is not valid UTF-8. Edited embeds Edit and so inherits this and
// UnmarshalJSON: encoding one writes the record without its Seq.
func (e Edit) MarshalJSON() ([]byte, error) {
	type plain Edit
	b, err := plumbing.MarshalPathsBytes(plain(e), e.Paths)
	if err != nil {
		return nil, err
	}
	return plumbing.AddPathBytes(b, "path_bytes", e.Path) // the tree's (treepath.go)
}

// UnmarshalJSON reads what MarshalJSON writes. A record without
// paths_bytes (every record whose paths are UTF-8) is decoded once, as a
// plain struct: replay decodes every edit record of the log on every
// command, so this is on the hooks' path (issue 5).
func (e *Edit) UnmarshalJSON(b []byte) error {
	type plain Edit
	if !bytes.Contains(b, []byte(`"paths_bytes"`)) {
		return readPath(b, (*plain)(e), func(v *plain) *string { return &v.Path })
	}
	var v plain
	if err := plumbing.UnmarshalPathsBytes(b, &v, func(v *plain) *[]string { return &v.Paths }); err != nil {
		return err
	}
	if err := plumbing.PathBytesOf(b, "path_bytes", &v.Path); err != nil {
		return err
	}
	*e = Edit(v)
	return nil
}

// NotePending is a note the agent's next prompt-submit hook prints once
// (RFC 8 restore=files: the rollback_note). Rollback names the rollback's
// safety checkpoint it came from.
type NotePending struct {
	Agent    string `json:"agent"`
	Text     string `json:"text"`
	Rollback string `json:"rollback,omitempty"`
	Path     string `json:"path"`
	// Session, when set, limits the note to events of that harness
	// session: the old conversation a rewind left behind (DESIGN.md 6).
	Session string `json:"session,omitempty"`
}

// NoteDelivered marks the pending note of Agent logged at seq Note as
// printed.
type NoteDelivered struct {
	Agent string `json:"agent"`
	Note  int64  `json:"note"`
}

// AgentBinding records the harness conversation an agent continues in
// after a rollback rewound it (RFC 8): HarnessSession is the new session id,
// ForkSource and ForkAt the source session and message it copies through.
type AgentBinding struct {
	Agent          string `json:"agent"`
	Harness        string `json:"harness"`
	HarnessSession string `json:"harness_session,omitempty"`
	ForkSource     string `json:"fork_source,omitempty"`
	ForkAt         string `json:"fork_at,omitempty"`
	Confirmed      bool   `json:"confirmed,omitempty"`
}

// AgentArchived retires an agent (RFC 5.3 agent.clean): it no longer
// shares any tree, and a rollback of it is conflict.invalid_transition.
// Removed and Kept count its refs.
type AgentArchived struct {
	Agent   string   `json:"agent"`
	Removed []string `json:"removed"`
	Kept    []string `json:"kept"`
}
