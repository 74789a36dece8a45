package cli

import (
	"context"

	"github.com/venom-org/git-venom/internal/rfcerr"
)

func runHook(ctx context.Context, e *env, args []string) error {
	return rfcerr.New("unsupported.command", nil, "git venom-hook is not built yet")
}
