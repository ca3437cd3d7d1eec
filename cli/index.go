package cli

import (
	"context"
	"fmt"
)

// runIndex is being written (issue 4); this placeholder keeps the package building.
func runIndex(ctx context.Context, env *Env, args []string) int {
	fmt.Fprintln(env.Stderr, "toolport index: not built yet")
	return ExitFailure
}
