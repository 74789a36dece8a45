// Command git-venom-plan is `git venom-plan`; see git-venom-plan(1).
package main

import (
	"os"

	"github.com/venom-org/git-venom/internal/cli"
)

func main() { os.Exit(cli.Main("plan", os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
