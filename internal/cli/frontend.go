package cli

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/harness"
	"github.com/venom-org/git-venom/internal/planview"
	"github.com/venom-org/git-venom/rollback"
)

// What another frontend over the same packages (the TUI, internal/tui)
// shares with the CLI, so that a path, a time and an error read the same in
// both and the exit-code table stays in one switch. internal/tui imports
// this package; this package never imports it (the hook's start-up would
// pay for the TUI's libraries).

// QuotePath is how the human output prints a path on a line (quotePath:
// as it is, or in git's C-style quoting when a byte would be ambiguous).
func QuotePath(path string) string { return quotePath(path) }

// Age is how the human output prints a record's RFC 3339 time: "3s ago",
// "5m ago", "2h ago", "4d ago"; the text itself when it does not parse.
func Age(at string) string { return age(at) }

// Short is an object name cut to the 10 hex digits the human output shows.
func Short(oid string) string { return short(oid) }

// Fail prints err as the human output does (error: and hint: lines on
// errw; a plain Go error is failed.internal) and returns its exit status,
// the class of its RFC 11.3 code (exitCode).
func Fail(errw io.Writer, err error) int {
	return report(&env{IO: IO{Err: errw}}, err)
}

// Recovered reports a panic p the way Main does, as failed.internal (exit
// 1), with the stack when GIT_VENOM_TRACE is set, and returns the exit
// status: a frontend's main defers it.
func Recovered(errw io.Writer, p any) int {
	if os.Getenv("GIT_VENOM_TRACE") != "" {
		fmt.Fprintf(errw, "%s\n", debug.Stack())
	}
	return Fail(errw, panicErr(p))
}

// RollbackOptions is o as git venom-plan and git venom-rollback fill it:
// the caller (Caller, RFC 11.4: an agent's real rollback of a guarded tree
// is denied.agent_caller) and the harness's part of a rewind
// (harness.ResolveEnd, harness.Rewind). A frontend that sets only the
// choices asks exactly what the commands ask.
func RollbackOptions(o rollback.Options) rollback.Options {
	o.Caller, o.ResolveEnd, o.Rewind = Caller(), harness.ResolveEnd, harness.Rewind
	return o
}

// ResumeLines are what a plan says of the rewound conversation beyond its
// summary: that the rollback copies it first (Claude Code, Codex), the
// command that continues the copy when it is known before (Claude Code),
// and, back before the first turn, that it goes on in a new session;
// then what becomes of each session it leaves behind. None when the
// conversation stays.
func ResumeLines(res *rollback.Result) []string {
	c := res.Conversation
	if !c.Rewinds || res.Restore == "files" {
		return nil
	}
	var out []string
	if rollback.ForksAtRollback(c.Harness) {
		how := map[string]string{"codex": "codex app-server thread/fork", "claude-code": "claude -p --fork-session, no model call"}[c.Harness]
		then := ", and prints how to resume the copy"
		if len(c.Resume) > 0 {
			then = ""
		}
		out = append(out, fmt.Sprintf("the rollback forks the %s conversation through %s first (%s)%s", c.Harness, orNone(c.ThroughTurn), how, then))
	}
	if len(c.Resume) > 0 {
		out = append(out, fmt.Sprintf("it continues in a new session %s: %s", c.HarnessSession, strings.Join(c.Resume, " ")))
	}
	if c.ThroughTurn == nil && len(c.OldSessions) > 0 {
		out = append(out, "it goes on in a new session, which you start (the rollback says how)")
	}
	for _, o := range c.OldSessions {
		out = append(out, fmt.Sprintf("the old session %s (%s) stays as it is; resumed, it is told once that the files were rolled back, as agent %s",
			o.Session, o.Harness, o.Agent))
	}
	return out
}

// ContinueLines are what a real call's result says of the conversation
// it rewound: the commands that continue the copy, at a terminal and in a
// script (indented two spaces, so a person copies them whole), or, back
// before the first turn, how to start a new session; then each session it
// left behind. None when the conversation stays.
func ContinueLines(res *rollback.Result) []string {
	c := res.Conversation
	if !c.Rewinds {
		return nil
	}
	var out []string
	if len(c.Resume) > 0 {
		out = append(out, "to resume the conversation as it was after "+orNone(c.ThroughTurn)+":", "  "+strings.Join(c.Resume, " "))
		if x := c.ResumeExec; len(x) > 0 {
			out = append(out, "  in a script: "+strings.Join(x, " ")+" <prompt>")
		}
	}
	if c.ThroughTurn == nil && len(c.OldSessions) > 0 {
		out = append(out, "the conversation went back to before the first turn: to go on, start a new session (not a resume of the old one):")
		if term, script := newSession(c.OldSessions[0].Harness); term != "" {
			out = append(out, "  "+term, "  in a script: "+script)
		}
	}
	for _, o := range c.OldSessions {
		out = append(out, fmt.Sprintf("the old session %s (%s) still remembers the dropped turns: close it; resumed, it is told once that the files were rolled back, and its turns are agent %s's",
			o.Session, o.Harness, o.Agent))
	}
	return out
}

// newSession is how to start a new session of a harness at a terminal and
// in a script; "" when the toolkit does not know.
func newSession(harness string) (terminal, script string) {
	switch harness {
	case "claude-code":
		return "claude", "claude -p <prompt>"
	case "codex":
		return "codex", "codex exec <prompt>"
	case "gemini":
		return "gemini", "gemini -p <prompt>"
	}
	return "", ""
}

// Verification is the line a real call's result ends with: whether the
// tree is as planned (RFC 7.4 step 6), or why that cannot be said; "" for
// a dry run.
func Verification(res *rollback.Result) string {
	if len(res.Repos) == 0 {
		return ""
	}
	conv := res.Repos[0].Converted
	switch {
	case len(conv) > 0:
		return fmt.Sprintf("not byte for byte: %d file(s) went through an end-of-line conversion or a filter, so their bytes may differ from what was captured: %s",
			len(conv), planview.FirstFew(conv, 5))
	case res.Exact != nil && !*res.Exact && res.After == "":
		return "warning: the rollback's own checkpoint could not be taken, so the result is not verified"
	case res.Exact != nil && !*res.Exact:
		return fmt.Sprintf("warning: something wrote to the tree during the rollback; %s shows it as it is now", res.After)
	case res.After != "":
		return fmt.Sprintf("verified: the tree is as planned (%s)", res.After)
	}
	return ""
}

// KeptBackupLines are the lines a real call's result says, in place of
// "the safety checkpoint holds the tree as it was before", when a
// repository's backup was kept because the safety checkpoint lost objects
// after the rollback checked it (repos[].backup): where what the rollback
// replaced is, and that the undo may not give everything back. The last
// line leads to the undo command. None otherwise.
func KeptBackupLines(res *rollback.Result) []string {
	var lines []string
	for _, r := range res.Repos {
		if r.Backup != "" {
			lines = append(lines, fmt.Sprintf("warning: the safety checkpoint %s lost objects after the rollback checked it (a git gc --prune=now beside it?); what the rollback replaced in %s is kept in %s", res.Safety, r.Repo, r.Backup))
		}
	}
	if len(lines) > 0 {
		lines = append(lines, fmt.Sprintf("going back to %s may not give back everything; to go back as far as it can:", res.Safety))
	}
	return lines
}

// RescuedLines are the lines a real call's result says of the saves it
// kept (repos[].rescued, issue 13 item 2): a person's saves made while it
// ran into files it then replaced, which are not in the tree now, each
// with the command that shows it (or the file that holds it), in every
// repository (a submodule's path relative to the top). At most
// rescuedShown are named; the rest are counted, with the command that
// lists them all (the rescue commit's diff from its parent, the safety
// checkpoint). None when there were none.
func RescuedLines(res *rollback.Result) []string {
	var rs []rollback.Rescued
	for _, r := range res.Repos {
		rs = append(rs, r.Rescued...)
	}
	if len(rs) == 0 {
		return nil
	}
	lines := []string{fmt.Sprintf("kept %d save(s) made while the rollback ran into files it then replaced; they are not in the tree now:", len(rs))}
	for i, r := range rs {
		if i == rescuedShown && len(rs) > rescuedShown+1 {
			rest, where := rs[i:], map[[2]string]bool{}
			for _, x := range rest {
				where[[2]string{x.Repo, x.Ref}] = true
			}
			more := fmt.Sprintf("    and %s more", planview.Number(len(rest)))
			if len(where) == 1 && rest[0].Ref != "" {
				more += ": " + commandLine(append(gitIn(rest[0]), "diff", "--name-only", rest[0].Ref+"^", rest[0].Ref)...)
			}
			return append(lines, more)
		}
		name := rescuedName(r)
		if r.Ref != "" {
			lines = append(lines, fmt.Sprintf("    %s: %s", quotePath(name), showRescued(r)))
		} else {
			lines = append(lines, fmt.Sprintf("    %s: in %s", quotePath(name), r.File))
		}
	}
	return lines
}

// rescuedName is the path of a rescued save relative to the top.
func rescuedName(r rollback.Rescued) string {
	if r.Repo != "" && r.Repo != checkpoint.TopRepo {
		return r.Repo + "/" + r.Path
	}
	return r.Path
}

// showRescued is checkpoint.ShowRescued as a command that works pasted
// into a shell: each word quoted where it must be (commandLine).
func showRescued(r rollback.Rescued) string {
	return commandLine(append(gitIn(r), "show", r.Ref+":"+r.Path)...)
}

// gitIn is "git", and "-C <repo>" for a save kept in a submodule.
func gitIn(r rollback.Rescued) []string {
	if r.Repo != "" && r.Repo != checkpoint.TopRepo {
		return []string{"git", "-C", r.Repo}
	}
	return []string{"git"}
}

// rescuedShown is how many rescued saves RescuedLines names.
const rescuedShown = 5

// RollbackCommand is the git venom-rollback command that confirms the
// plan res with the choices of o and the plan's pathspec, each word quoted
// for a POSIX shell where it must be (commandLine), so it works pasted.
func RollbackCommand(res *rollback.Result, o rollback.Options) string {
	words := append([]string{"git", "venom-rollback", "--agent", res.Agent, res.Checkpoint, "--plan", res.Plan}, choiceArgs(o)...)
	return commandLine(append(words, specArgs(res.Pathspec)...)...)
}
