package cli

import (
	"os"
	"strconv"
)

// columns is the width, in terminal cells, the human output fits its
// lines to: $COLUMNS when it is a positive number (as git's term_columns
// reads it, and as git sets it for a pager it starts), else the
// terminal's when Out is one, else 0: a file or a pipe gets whole lines.
func (e *env) columns() int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, ok := e.Out.(*os.File); ok {
		if n, ok := termColumns(f); ok && n > 0 {
			return n
		}
	}
	return 0
}
