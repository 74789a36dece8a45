// Command git-venom-rollback is `git venom-rollback`; see git-venom-rollback(1).
package main

import (
	"os"

	"github.com/venom-org/git-venom/internal/cli"
)

func main() { os.Exit(cli.Main("rollback", os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
