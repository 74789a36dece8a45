// Command git-venom is `git venom`, the terminal UI (RFC 12): agents,
// checkpoints, diffs, and a rollback's dry run as a confirmation screen.
package main

import (
	"os"

	"github.com/venom-org/git-venom/internal/tui"
)

func main() {
	os.Exit(tui.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
