package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/harness"
)

const doctorUsage = "git venom-doctor [--json]"

// doctorOutput is `git venom-doctor --json`: ok is false when any check
// failed (the command then exits 1).
type doctorOutput struct {
	OK     bool               `json:"ok"`
	Tree   string             `json:"tree"`
	Checks []checkpoint.Check `json:"checks"`
}

// exitStatus ends a command with a status and no error message (its output
// already said what is wrong).
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func runDoctor(ctx context.Context, e *env, args []string) error {
	fs := e.flags("doctor")
	if err := e.parse(fs, doctorUsage, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr(doctorUsage, "doctor takes no arguments")
	}
	t, err := checkpoint.OpenTree(ctx, "")
	if err != nil {
		return err
	}
	home, _ := os.UserHomeDir()
	checks := append(t.Doctor(ctx), harness.TrustChecks(harness.TrustOptions{Root: t.Path(), Home: home})...)
	out := doctorOutput{OK: true, Tree: t.Path(), Checks: checks}
	for _, c := range out.Checks {
		if c.Level == "fail" {
			out.OK = false
		}
	}
	if e.JSON {
		writeJSON(e.Out, out)
	} else {
		for _, c := range out.Checks {
			mark := "ok  "
			switch c.Level {
			case "warn":
				mark = "warn"
			case "fail":
				mark = "FAIL"
			}
			fmt.Fprintf(e.Out, "%s %-22s %s\n", mark, c.ID, c.Message)
			if c.Fix != "" && c.Level != "ok" {
				fmt.Fprintf(e.Out, "     %-22s fix: %s\n", "", c.Fix)
			}
		}
	}
	if !out.OK {
		return exitStatus(1)
	}
	return nil
}
