package sqlstore

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/store"
)

func TestStageStatesRoundTripAndReplace(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		put := []store.StageState{
			{ISRC: "USRC17607839", Stage: "lyrics", InputHash: "h1", Status: store.StageDone, Output: `{"plain":"la la"}`, Attempts: 1},
			{ISRC: "USRC17607839", Stage: "features", InputHash: "h2", Status: store.StageNone, Detail: "not in the catalogue", Attempts: 2},
			{ISRC: "GBAYE9700123", Stage: "lyrics", InputHash: "h3", Status: store.StageFailed, Detail: "HTTP 503"},
		}
		if err := db.PutStages(ctx, put); err != nil {
			t.Fatal(err)
		}
		got, err := db.StageStates(ctx, []string{"USRC17607839", "GBAYE9700123", "NOTTHERE0000"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || len(got["USRC17607839"]) != 2 {
			t.Fatalf("states: %+v", got)
		}
		l := got["USRC17607839"]["lyrics"]
		if l.InputHash != "h1" || l.Status != store.StageDone || l.Output != `{"plain":"la la"}` || l.Attempts != 1 || l.UpdatedAt.IsZero() {
			t.Errorf("lyrics state: %+v", l)
		}
		if f := got["USRC17607839"]["features"]; f.Status != store.StageNone || f.Detail != "not in the catalogue" {
			t.Errorf("features state: %+v", f)
		}
		// A second put of the same (isrc, stage) replaces it.
		if err := db.PutStages(ctx, []store.StageState{{ISRC: "GBAYE9700123", Stage: "lyrics", InputHash: "h4", Status: store.StageDone, Output: "{}"}}); err != nil {
			t.Fatal(err)
		}
		got, _ = db.StageStates(ctx, []string{"GBAYE9700123"})
		if s := got["GBAYE9700123"]["lyrics"]; s.InputHash != "h4" || s.Status != store.StageDone || s.Detail != "" {
			t.Errorf("replaced state: %+v", s)
		}
	})
}

func TestPutStagesRefusesBadStates(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		for name, s := range map[string]store.StageState{
			"unknown status": {ISRC: "X", Stage: "lyrics", Status: "maybe"},
			"no stage":       {ISRC: "X", Status: store.StageDone},
			"NUL in output":  {ISRC: "X", Stage: "lyrics", Status: store.StageDone, Output: "a\x00b"},
			"huge output":    {ISRC: "X", Stage: "lyrics", Status: store.StageDone, Output: strings.Repeat("a", maxStageOutput+1)},
		} {
			if err := db.PutStages(context.Background(), []store.StageState{s}); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%s: err = %v, want ErrInvalid", name, err)
			}
		}
	})
}
