package cli

import (
	"os"
	"strings"

	"github.com/spf13/pflag"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/plumbing"
)

// splitDash returns fs's arguments before "--" and the ones after it (the
// pathspec), as git's commands split them.
func splitDash(fs *pflag.FlagSet) (args, spec []string) {
	args = fs.Args()
	if d := fs.ArgsLenAtDash(); d >= 0 {
		return args[:d], args[d:]
	}
	return args, nil
}

// pathspec is the pathspec spec as typed here: relative to the current
// directory (after -C), as git's. nil for none.
func pathspec(spec []string) (*plumbing.Pathspec, error) {
	if len(spec) == 0 {
		return nil, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": ".", "reason": "getwd"}, "reading the current directory")
	}
	return &plumbing.Pathspec{Args: spec, Dir: dir}, nil
}

// shellSafe are the bytes a POSIX shell reads as themselves in a word
// (anywhere in it; "~" and "#" only lose that at its start, so they are
// quoted).
const shellSafe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@%+,"

// shellQuote is arg as a POSIX shell reads it back: as it is when every
// byte is shellSafe, else in single quotes (a quote in it closes them,
// is escaped with a backslash, and opens them again).
func shellQuote(arg string) string {
	if arg != "" && strings.Trim(arg, shellSafe) == "" {
		return arg
	}
	return "'" + strings.ReplaceAll(arg, "'", `'\''`) + "'"
}

// commandLine is words as one command a person can paste into a shell:
// each quoted by shellQuote, except a first "git venom-…" pair.
func commandLine(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shellQuote(w)
	}
	return strings.Join(q, " ")
}
