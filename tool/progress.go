package tool

import "context"

// Progress is a report on a long call: done out of total (total 0 when unknown),
// with an optional message. Surfaces forward it: MCP as progress notifications,
// the CLI as a progress line.
type Progress struct {
	Done    float64
	Total   float64
	Message string
}

type progressKey struct{}

// WithProgress returns a context whose tool calls report progress to fn. fn
// must be safe for concurrent use and quick.
func WithProgress(ctx context.Context, fn func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// ReportProgress tells whoever is listening how far a long tool has come. It is
// a no-op when nobody is.
func ReportProgress(ctx context.Context, p Progress) {
	if fn, ok := ctx.Value(progressKey{}).(func(Progress)); ok && fn != nil {
		fn(p)
	}
}
