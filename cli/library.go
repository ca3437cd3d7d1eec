package cli

import (
	"context"
	"fmt"
)

// runLibrary is being written (issue 4); this placeholder keeps the package building.
func runLibrary(ctx context.Context, env *Env, args []string) int {
	fmt.Fprintln(env.Stderr, "toolport library: not built yet")
	return ExitFailure
}
