// Command git-venom-checkpoint is `git venom-checkpoint`; see git-venom-checkpoint(1).
package main

import (
	"os"

	"github.com/venom-org/git-venom/internal/cli"
)

func main() { os.Exit(cli.Main("checkpoint", os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
