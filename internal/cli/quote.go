package cli

import "github.com/venom-org/git-venom/internal/planview"

// quotePath is planview.Quote: a path as the human output prints it on a
// line (git's C-style quoting where a byte would make the line ambiguous).
func quotePath(path string) string { return planview.Quote(path) }

// quotePaths quotes each of paths with quotePath.
func quotePaths(paths []string) []string { return planview.Quotes(paths) }
