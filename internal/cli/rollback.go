package cli

import (
	"context"

	"github.com/venom-org/git-venom/internal/rfcerr"
)

func runPlan(ctx context.Context, e *env, args []string) error {
	return rfcerr.New("unsupported.command", nil, "git venom-plan is not built yet")
}

func runRollback(ctx context.Context, e *env, args []string) error {
	return rfcerr.New("unsupported.command", nil, "git venom-rollback is not built yet")
}
