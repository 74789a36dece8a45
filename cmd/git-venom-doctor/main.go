// Command git-venom-doctor is `git venom-doctor`; see git-venom-doctor(1).
package main

import (
	"os"

	"github.com/venom-org/git-venom/internal/cli"
)

func main() { os.Exit(cli.Main("doctor", os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
