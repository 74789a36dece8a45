package cli

import (
	"context"

	"github.com/venom-org/git-venom/internal/rfcerr"
)

func runDoctor(ctx context.Context, e *env, args []string) error {
	return rfcerr.New("unsupported.command", nil, "git venom-doctor is not built yet")
}
