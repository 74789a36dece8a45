package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/venom-org/git-venom/refs"
)

// State is what replaying the log gives: every agent with its checkpoints,
// turns and captures, in log order. It is rebuilt on each command; the log
// stays the only source of truth.
type State struct {
	Agents map[string]*Agent
	// Torn is true when the log's last line was cut short by a crash.
	Torn bool
	// Seq is the last record's sequence number.
	Seq int64
	// Bindings are every agent.binding record, in log order (an agent's
	// latest is also its Agent.Binding): a hook finds a session's agent
	// in them (harness, RFC 8).
	Bindings []AgentBinding
}

// Saved is one checkpoint as the log knows it: its number, record, current
// label, and the seq of the record that created it.
type Saved struct {
	N     int
	Rec   Checkpoint
	Label string
	Seq   int64
	// Pruned is true once a checkpoint.pruned record names it.
	Pruned bool
}

// ID is the checkpoint id k<n>.
func (s *Saved) ID() string { return refs.ID(s.N) }

// Capture is one capture event of an agent, in order: taken, reused or
// failed. The windows of RFC 7.3 are pairs of consecutive captures.
type Capture struct {
	Seq        int64
	Type       string // checkpoint.taken, checkpoint.reused, checkpoint.failed
	Checkpoint string // "" for a failed capture
	Reason     string
	Turn       string // "" between turns
	Path       string
	// At and ThroughTurn are a reused capture's own (checkpoint.reused's
	// at and through_turn), for the listing; empty for the others.
	At          string
	ThroughTurn *string
}

// Turn is one turn of an agent.
type Turn struct {
	N                  int
	StartSeq, EndSeq   int64 // EndSeq 0 while open
	Start, End         string
	NoStart, Synthetic bool
	Harness            string
	HarnessSession     string
	HarnessTurn        string
	HarnessEnd         string
	// HarnessEndPending is set while HarnessEnd is not known yet
	// (TurnEnded.HarnessEndPending).
	HarnessEndPending *EndPending
}

// ID is the turn id t<n>.
func (t *Turn) ID() string { return refs.Turn(t.N) }

// Edited is an edit record with the seq it was logged at, so RFC 7.3 can
// place it in a window.
type Edited struct {
	Seq int64
	Edit
}

// Agent is one agent's replayed state.
type Agent struct {
	ID          string
	Checkpoints []*Saved // in log order, which is n order
	byID        map[string]*Saved
	MaxN        int
	Turns       []*Turn
	Captures    []Capture
	Edits       []Edited
	// Trees maps each tree path the agent registered to its isolation.
	Trees map[string]string
	// Rollbacks lists started rollbacks; Open is the last one without an end.
	Rollbacks    []RollbackStarted
	OpenRollback *RollbackStarted
	Ended        []RollbackEnded
	// Dropped holds the turns a rollback with --restore all dropped.
	Dropped map[string]bool
	// Notes are pending notes not yet delivered, by seq.
	Notes map[int64]NotePending
	// Binding is the agent's latest agent.binding, if any.
	Binding *AgentBinding
	// Archived is true after agent.archived, until the agent captures
	// again (which registers it anew).
	Archived bool
}

// Checkpoint finds a checkpoint by id; nil when the log has none.
func (a *Agent) Checkpoint(id string) *Saved { return a.byID[id] }

// Latest is the newest checkpoint not pruned, or nil.
func (a *Agent) Latest() *Saved {
	for i := len(a.Checkpoints) - 1; i >= 0; i-- {
		if !a.Checkpoints[i].Pruned {
			return a.Checkpoints[i]
		}
	}
	return nil
}

// OpenTurn is the running turn, or nil.
func (a *Agent) OpenTurn() *Turn {
	if n := len(a.Turns); n > 0 && a.Turns[n-1].EndSeq == 0 {
		return a.Turns[n-1]
	}
	return nil
}

// LastEnded is the newest turn that has ended and was not dropped by a
// rollback that rewound the conversation, or nil (RFC 3.3 through_turn:
// after a rewind, captures go with the rewound conversation).
func (a *Agent) LastEnded() *Turn {
	for i := len(a.Turns) - 1; i >= 0; i-- {
		if a.Turns[i].EndSeq != 0 && !a.Dropped[a.Turns[i].ID()] {
			return a.Turns[i]
		}
	}
	return nil
}

// MaxTurn is the highest turn number used, so turn ids are never reused.
func (a *Agent) MaxTurn() int {
	if n := len(a.Turns); n > 0 {
		return a.Turns[n-1].N
	}
	return 0
}

func (s *State) agent(id string) *Agent {
	a := s.Agents[id]
	if a == nil {
		a = &Agent{ID: id, byID: map[string]*Saved{}, Trees: map[string]string{}, Dropped: map[string]bool{}, Notes: map[int64]NotePending{}}
		s.Agents[id] = a
	}
	return a
}

// Replay builds the State from records, in one linear pass. It keeps each
// record's decoded body in recs (Raw.body), so a replay of the same
// records again decodes no JSON.
func Replay(recs []Raw) (*State, error) {
	s := &State{Agents: map[string]*Agent{}}
	if err := s.replay(recs); err != nil {
		return nil, err
	}
	return s, nil
}

// replay applies recs to s, in order.
func (s *State) replay(recs []Raw) error {
	for i := range recs {
		r := &recs[i]
		s.Seq = r.Seq
		if err := s.apply(r); err != nil {
			return fmt.Errorf("log record %d (%s): %w", r.Seq, r.Type, err)
		}
	}
	return nil
}

func (s *State) apply(r *Raw) error {
	switch r.Type {
	case TypeCheckpointTaken:
		c, err := decodeBody[Checkpoint](r)
		if err != nil {
			return err
		}
		n, err := refs.ParseID(c.Checkpoint)
		if err != nil {
			return err
		}
		a := s.agent(c.Agent)
		sv := &Saved{N: n, Rec: c, Label: c.Label, Seq: r.Seq}
		a.Checkpoints = append(a.Checkpoints, sv)
		a.byID[c.Checkpoint] = sv
		if n > a.MaxN {
			a.MaxN = n
		}
		path := ""
		if len(c.Repos) > 0 {
			path = c.Repos[0].Path
		}
		a.Captures = append(a.Captures, Capture{Seq: r.Seq, Type: r.Type, Checkpoint: c.Checkpoint, Reason: c.Reason, Turn: deref(c.Turn), Path: path})
	case TypeCheckpointReused:
		c, err := decodeBody[Reused](r)
		if err != nil {
			return err
		}
		a := s.agent(c.Agent)
		if sv := a.byID[c.Checkpoint]; sv != nil && c.Label != "" {
			sv.Label = c.Label
		}
		a.Captures = append(a.Captures, Capture{Seq: r.Seq, Type: r.Type, Checkpoint: c.Checkpoint, Reason: c.Reason, Turn: deref(c.Turn), Path: c.Path,
			At: c.At, ThroughTurn: c.ThroughTurn})
	case TypeCheckpointFailed:
		c, err := decodeBody[Failed](r)
		if err != nil {
			return err
		}
		a := s.agent(c.Agent)
		a.Captures = append(a.Captures, Capture{Seq: r.Seq, Type: r.Type, Reason: c.Reason, Turn: deref(c.Turn), Path: c.Path})
	case TypeCheckpointPruned:
		c, err := decodeBody[Pruned](r)
		if err != nil {
			return err
		}
		a := s.agent(c.Agent)
		for _, id := range c.Checkpoints {
			if sv := a.byID[id]; sv != nil {
				sv.Pruned = true
			}
		}
	case TypeTurnStarted:
		t, err := decodeBody[TurnStarted](r)
		if err != nil {
			return err
		}
		n, err := refs.ParseTurn(t.Turn)
		if err != nil {
			return err
		}
		a := s.agent(t.Agent)
		a.Turns = append(a.Turns, &Turn{N: n, StartSeq: r.Seq, Start: t.Checkpoint, NoStart: t.NoStart,
			Harness: t.Harness, HarnessSession: t.HarnessSession, HarnessTurn: t.HarnessTurn})
	case TypeTurnEnded:
		t, err := decodeBody[TurnEnded](r)
		if err != nil {
			return err
		}
		a := s.agent(t.Agent)
		for i := len(a.Turns) - 1; i >= 0; i-- {
			if a.Turns[i].ID() == t.Turn {
				tt := a.Turns[i]
				tt.EndSeq, tt.End, tt.Synthetic = r.Seq, t.Checkpoint, t.Synthetic
				if t.HarnessEnd != "" {
					tt.HarnessEnd, tt.HarnessEndPending = t.HarnessEnd, nil
				} else if t.HarnessEndPending != nil {
					tt.HarnessEndPending = t.HarnessEndPending
				}
				if t.Harness != "" {
					tt.Harness = t.Harness
				}
				if t.HarnessTurn != "" {
					tt.HarnessTurn = t.HarnessTurn
				}
				if t.HarnessSession != "" {
					tt.HarnessSession = t.HarnessSession
				}
				break
			}
		}
	case TypeAgentRegistered:
		g, err := decodeBody[AgentRegistered](r)
		if err != nil {
			return err
		}
		a := s.agent(g.Agent)
		a.Archived = false
		if _, ok := a.Trees[g.Path]; !ok {
			a.Trees[g.Path] = g.Isolation
		}
	case TypeEdit:
		e, err := decodeBody[Edit](r)
		if err != nil {
			return err
		}
		a := s.agent(e.Agent)
		a.Edits = append(a.Edits, Edited{Seq: r.Seq, Edit: e})
	case TypeRollbackStarted:
		b, err := decodeBody[RollbackStarted](r)
		if err != nil {
			return err
		}
		a := s.agent(b.Agent)
		a.Rollbacks = append(a.Rollbacks, b)
		a.OpenRollback = &a.Rollbacks[len(a.Rollbacks)-1]
	case TypeRollbackEnded:
		b, err := decodeBody[RollbackEnded](r)
		if err != nil {
			return err
		}
		a := s.agent(b.Agent)
		a.Ended = append(a.Ended, b)
		a.OpenRollback = nil
		if b.OK {
			for _, d := range b.Drops {
				a.Dropped[d] = true
			}
		}
	case TypeNotePending:
		n, err := decodeBody[NotePending](r)
		if err != nil {
			return err
		}
		s.agent(n.Agent).Notes[r.Seq] = n
	case TypeNoteDelivered:
		n, err := decodeBody[NoteDelivered](r)
		if err != nil {
			return err
		}
		delete(s.agent(n.Agent).Notes, n.Note)
	case TypeAgentArchived:
		g, err := decodeBody[AgentArchived](r)
		if err != nil {
			return err
		}
		a := s.agent(g.Agent)
		a.Archived = true
		a.Trees = map[string]string{}
		for _, id := range g.Removed {
			if sv := a.byID[id]; sv != nil {
				sv.Pruned = true
			}
		}
	case TypeAgentBinding:
		b, err := decodeBody[AgentBinding](r)
		if err != nil {
			return err
		}
		s.agent(b.Agent).Binding = &b
		s.Bindings = append(s.Bindings, b)
	}
	return nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// AgentIDs returns the agents that have at least one checkpoint taken in
// tree (a canonical path), sorted.
func (s *State) AgentIDs(tree string) []string {
	var ids []string
	for id, a := range s.Agents {
		for _, c := range a.Checkpoints {
			if len(c.Rec.Repos) > 0 && c.Rec.Repos[0].Path == tree {
				ids = append(ids, id)
				break
			}
		}
	}
	sort.Strings(ids)
	return ids
}

// Load replays the log into a new State (RFC 4.2: the log is the truth).
// Each call reads the log again, so what another process appended is
// seen, but it decodes and replays only the records appended since a
// point it already knows the state at: the Log's previous Load in this
// process (readCache), else the replay snapshot beside the log
// (snapshot.go), else the start of the log. That point is trusted only
// while the log is still the file read before (in process), no shorter,
// still holds the point's last record's line where it was, and what
// follows starts at the next seq; otherwise the log is read whole. A Load
// that replayed snapshotEvery records or more writes a new snapshot. Each
// call builds a new State, but States from one Log share the records'
// decoded bodies (the slices, maps and pointers in Saved.Rec, Edited,
// Turn.HarnessEndPending, Agent.Rollbacks and the like): callers treat
// what they hold there as read-only.
func (l *Log) Load() (*State, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.load(nil)
}

// LoadAgent is Load for one agent: what Load's State has for id (nil
// when the log has nothing of it), without building the other agents'
// state from the snapshot (each session of a harness is an agent, so a
// long log is mostly other agents'). The records after the snapshot are
// replayed whole, each changing only its own agent.
func (l *Log) LoadAgent(id string) (*Agent, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, err := l.load(map[string]bool{id: true})
	if err != nil {
		return nil, err
	}
	return s.Agents[id], nil
}

// Bindings returns every agent.binding record of the log, in order
// (State.Bindings), without building any agent's state from the snapshot.
func (l *Log) Bindings() ([]AgentBinding, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, err := l.load(map[string]bool{})
	if err != nil {
		return nil, err
	}
	return s.Bindings, nil
}

// load is Load, with only the agents only names built from the snapshot
// (all when only is nil). A Load that replays snapshotEvery records or
// more past the snapshot builds every agent, to write a new one.
func (l *Log) load(only map[string]bool) (*State, error) {
	for whole := false; ; whole = true {
		base, recs, torn, err := l.readNew(whole)
		if err != nil {
			return nil, err
		}
		c := l.replayed
		write := c != nil && len(c.recs) >= l.snapshotEvery() && !l.noSnapshot
		s := &State{Agents: map[string]*Agent{}}
		if base != nil {
			pick := only
			if write {
				pick = nil
			}
			if s, err = decodeAgents(base.state, pick); err != nil {
				// A snapshot that passed its checksum but does not
				// decode: this version wrote it wrong. Never trusted:
				// read the log whole.
				l.setReplayed(nil)
				continue
			}
		}
		if err := s.replay(recs); err != nil {
			l.setReplayed(nil)
			return nil, err
		}
		if write {
			sn, err := l.writeSnapshot(fileIDOf(c.fi), c.end, c.seq, c.tail, s)
			if err != nil {
				l.noSnapshot = true // a read-only directory: do not try each Load
			} else {
				c.base, c.recs = sn, nil
			}
		}
		s.Torn = torn
		return s, nil
	}
}

// readCache is what Load read of the log: the file (f, kept open, so
// that its inode cannot be given to another file while the cache names
// it, and fi), the state at a point of it (base, a snapshot; nil for the
// start of the log) and the records after that point (recs, with their
// decoded bodies), where the complete lines read end (end, in bytes), the
// seq of the last record (seq) and the log's bytes from the start of that
// record's line to end (tail), to see on the next read that the file
// still holds it there.
type readCache struct {
	f    *os.File
	fi   os.FileInfo
	end  int64
	seq  int64
	tail []byte
	base *snapshot
	recs []Raw
}

// readNew returns the state's starting point (base, nil for the start of
// the log) and the log's records after it, from l.replayed and the bytes
// after it when it is still the log's prefix, else from the snapshot file
// and the bytes after it when it is, else (and always when whole) from the
// whole file, and keeps them in l.replayed. An append only ever adds whole
// lines after the last complete one (cutting a torn line first), numbered
// on from the last record's seq, so when the file still holds the last
// record's line where it was read and what follows starts at the next
// seq, the records before are unchanged. (A rewrite in place that keeps
// that line where it was is not seen: nothing writes the log so.)
func (l *Log) readNew(whole bool) (base *snapshot, recs []Raw, torn bool, err error) {
	f, err := os.Open(l.Path())
	if errors.Is(err, os.ErrNotExist) {
		l.setReplayed(nil)
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, fmt.Errorf("reading the log: %w", err)
	}
	kept := false
	defer func() {
		if !kept {
			f.Close()
		}
	}()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, false, fmt.Errorf("reading the log: %w", err)
	}
	if c := l.replayed; c != nil && !whole && os.SameFile(c.fi, fi) {
		if more, torn, data, ok := continueAt(f, fi.Size(), c.end, c.tail, c.seq); ok {
			recs = append(c.recs[:len(c.recs):len(c.recs)], more...)
			kept = l.keep(f, fi, c.end-int64(len(c.tail)), data, c.base, recs)
			return c.base, recs, torn, nil
		}
	}
	l.setReplayed(nil)
	if !whole {
		if sn := l.readSnapshot(); sn != nil && sn.file == fileIDOf(fi) {
			if more, torn, data, ok := continueAt(f, fi.Size(), sn.end, []byte(sn.tail), sn.seq); ok {
				kept = l.keep(f, fi, sn.end-int64(len(sn.tail)), data, sn, more)
				return sn, more, torn, nil
			}
		}
	}
	// Read whole: the first time, another file, or the tail not as
	// expected (a parse error is then reported with its true line).
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, nil, false, fmt.Errorf("reading the log: %w", err)
	}
	recs, torn, err = Parse(data)
	if err != nil {
		return nil, nil, false, err
	}
	kept = l.keep(f, fi, 0, data, nil, recs)
	return nil, recs, torn, nil
}

// continueAt reads the log file f (size bytes) on from a point whose
// complete lines end at end, the last of its records being seq with the
// line that starts tail (tail runs to end). ok is false unless the file
// is no shorter, still holds tail there, and the records after it parse
// and start at seq+1; then more are those records, torn whether a torn
// line follows them, and data the file's bytes from end-len(tail) on.
func continueAt(f *os.File, size, end int64, tail []byte, seq int64) (more []Raw, torn bool, data []byte, ok bool) {
	if size < end {
		return nil, false, nil, false
	}
	from := end - int64(len(tail))
	data = make([]byte, size-from)
	if _, err := f.ReadAt(data, from); err != nil || !bytes.HasPrefix(data, tail) {
		return nil, false, nil, false
	}
	more, torn, err := Parse(data[len(tail):])
	if err != nil || (len(more) > 0 && more[0].Seq != seq+1) {
		return nil, false, nil, false
	}
	return more, torn, data, true
}

// setReplayed replaces l.replayed with c, closing the file the old one
// kept open.
func (l *Log) setReplayed(c *readCache) {
	if old := l.replayed; old != nil && (c == nil || old.f != c.f) {
		old.f.Close()
	}
	l.replayed = c
}

// keep records in l.replayed that the log file f (fi) holds, after the
// point base (nil: the start), records recs in its complete lines, data
// being its bytes from offset from on, and reports whether it kept f open
// for that. With no record at all, nothing is kept.
func (l *Log) keep(f *os.File, fi os.FileInfo, from int64, data []byte, base *snapshot, recs []Raw) bool {
	n := bytes.LastIndexByte(data, '\n')
	if n < 0 || (len(recs) == 0 && base == nil) {
		l.setReplayed(nil)
		return false
	}
	c := &readCache{f: f, fi: fi, end: from + int64(n) + 1, base: base, recs: recs}
	// The tail runs from the last record's line (only blank lines can
	// follow it) to the end of the complete lines.
	if len(recs) == 0 {
		c.seq = base.seq
		c.tail = append([]byte(nil), data[:n+1]...) // base's tail and any blank lines after it
	} else {
		last := recs[len(recs)-1]
		start := bytes.LastIndex(data[:n+1], last.Line)
		if start < 0 {
			l.setReplayed(nil) // the record read is before data: keep nothing
			return false
		}
		c.seq = last.Seq
		c.tail = append([]byte(nil), data[start:n+1]...)
	}
	l.setReplayed(c)
	return true
}
