// Command git-venom-hook is `git venom-hook`; see git-venom-hook(1).
package main

import (
	"os"

	"github.com/venom-org/git-venom/internal/cli"
)

func main() { os.Exit(cli.Main("hook", os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
