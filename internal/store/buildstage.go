package store

import (
	"context"
	"time"
)

// Stage outcomes of an index build, as [StageState.Status] holds them.
const (
	// StageDone: the stage produced its output (lyrics, features, an
	// interpretation).
	StageDone = "done"
	// StageNone: the stage ran and the upstream has nothing for the track
	// (no lyrics, an instrumental, not in the audio-features catalogue).
	// A normal outcome, kept so that a re-run does not ask again.
	StageNone = "none"
	// StageFailed: the stage failed (after its retries); a re-run tries it
	// again.
	StageFailed = "failed"
)

// StageState is what an index build recorded for one track and stage.
type StageState struct {
	ISRC  string
	Stage string
	// InputHash identifies the inputs the stage ran on (and the version of
	// its method, such as a prompt): a different hash makes it stale.
	InputHash string
	Status    string // StageDone, StageNone or StageFailed
	// Output is the stage's result, as the build encodes it (JSON).
	Output string
	// Detail says why a stage has no output or failed; no secrets.
	Detail string
	// Attempts counts the upstream calls the last run of the stage made.
	Attempts  int
	UpdatedAt time.Time // set by the store
}

// BuildStages stores the per-track, per-stage state of index builds.
type BuildStages interface {
	// StageStates returns the states of the given tracks: ISRC → stage →
	// state. Tracks with none are left out.
	StageStates(ctx context.Context, isrcs []string) (map[string]map[string]StageState, error)
	// PutStages writes states by (ISRC, stage) in one transaction.
	PutStages(ctx context.Context, states []StageState) error
}
