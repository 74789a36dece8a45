// Package refs builds, parses and validates the names of RFC 5.1:
// refs/venom/checkpoints/<agent>/<n>, checkpoint ids k<n> and turn ids t<n>.
// It does no I/O.
package refs

import (
	"fmt"
	"strconv"
	"strings"
)

// Prefix is the namespace every checkpoint ref lives under.
const Prefix = "refs/venom/checkpoints/"

// agentShape reports whether id has DESIGN.md section 1's agent id shape,
// [a-z0-9][a-z0-9._-]{0,63}: a lower-case ref component of at most 64
// characters. It is stricter than git check-ref-format, so every id it
// accepts is a valid component (no "..", no ".lock" suffix checked in
// ValidAgent, no leading '.'). A loop, not a regexp: compiling that
// regexp cost every process about 0.26 ms at its start (issue 16, the
// hook turn's profile).
func agentShape(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// ValidAgent returns an error saying why id is not a valid agent id, or nil.
func ValidAgent(id string) error {
	if !agentShape(id) {
		return fmt.Errorf("agent id %q must match [a-z0-9][a-z0-9._-]{0,63}", id)
	}
	if strings.Contains(id, "..") || strings.HasSuffix(id, ".lock") || strings.HasSuffix(id, ".") {
		return fmt.Errorf("agent id %q is not a valid ref component", id)
	}
	return nil
}

// Checkpoint is the ref of checkpoint n of agent.
func Checkpoint(agent string, n int) string {
	return Prefix + agent + "/" + strconv.Itoa(n)
}

// RescuedPrefix is where a rollback keeps saves a person made while it
// ran (rollback's rescue): refs/venom/rescued/<agent>/<n>, n the number
// of the rollback's safety checkpoint.
const RescuedPrefix = "refs/venom/rescued/"

// Rescued is the ref of the saves rescued by the rollback of agent whose
// safety checkpoint is k<n>.
func Rescued(agent string, n int) string { return RescuedPrefix + agent + "/" + strconv.Itoa(n) }

// AgentPrefix is the ref prefix holding all of agent's checkpoints.
func AgentPrefix(agent string) string { return Prefix + agent + "/" }

// ParseRef splits a checkpoint ref into agent and number.
func ParseRef(ref string) (agent string, n int, ok bool) {
	rest, found := strings.CutPrefix(ref, Prefix)
	if !found {
		return "", 0, false
	}
	a, num, found := strings.Cut(rest, "/")
	if !found || ValidAgent(a) != nil {
		return "", 0, false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 || strconv.Itoa(n) != num {
		return "", 0, false
	}
	return a, n, true
}

// ID is the checkpoint id k<n>.
func ID(n int) string { return "k" + strconv.Itoa(n) }

// ParseID reads k<n> (or a bare n) and returns n.
func ParseID(id string) (int, error) {
	s := strings.TrimPrefix(id, "k")
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || strconv.Itoa(n) != s {
		return 0, fmt.Errorf("checkpoint id %q is not of the form k<n>", id)
	}
	return n, nil
}

// Turn is the turn id t<n>.
func Turn(n int) string { return "t" + strconv.Itoa(n) }

// ParseTurn reads t<n> and returns n.
func ParseTurn(id string) (int, error) {
	s, ok := strings.CutPrefix(id, "t")
	n, err := strconv.Atoi(s)
	if !ok || err != nil || n < 1 || strconv.Itoa(n) != s {
		return 0, fmt.Errorf("turn id %q is not of the form t<n>", id)
	}
	return n, nil
}
