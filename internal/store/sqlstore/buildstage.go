package sqlstore

import (
	"context"
	"fmt"

	"github.com/toolport/toolport/internal/store"
)

// maxStageOutput bounds what one stage state keeps (lyrics are the largest).
const maxStageOutput = 1 << 20

// StageStates returns the index-build states of the given tracks.
func (db *DB) StageStates(ctx context.Context, isrcs []string) (map[string]map[string]store.StageState, error) {
	out := map[string]map[string]store.StageState{}
	for _, c := range chunks(isrcs, lookupChunk) {
		rows, err := db.r.QueryContext(ctx, `SELECT isrc, stage, input_hash, status, output, detail, attempts, updated_at
            FROM index_build_stages WHERE isrc IN (`+placeholders(1, len(c))+`)`, c...)
		if err != nil {
			return nil, fmt.Errorf("store: stage states: %w", err)
		}
		for rows.Next() {
			var s store.StageState
			var at dbTime
			if err := rows.Scan(&s.ISRC, &s.Stage, &s.InputHash, &s.Status, &s.Output, &s.Detail, &s.Attempts, &at); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: stage states: %w", err)
			}
			s.UpdatedAt = at.t
			if out[s.ISRC] == nil {
				out[s.ISRC] = map[string]store.StageState{}
			}
			out[s.ISRC][s.Stage] = s
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("store: stage states: %w", err)
		}
	}
	return out, nil
}

// PutStages writes index-build states by (ISRC, stage) in one transaction.
func (db *DB) PutStages(ctx context.Context, states []store.StageState) error {
	for i, s := range states {
		switch {
		case s.ISRC == "" || len(s.ISRC) > store.MaxISRCLen || s.Stage == "" || len(s.Stage) > 64:
			return fmt.Errorf("%w: stage state %d: bad ISRC or stage", store.ErrInvalid, i)
		case s.Status != store.StageDone && s.Status != store.StageNone && s.Status != store.StageFailed:
			return fmt.Errorf("%w: stage state %d: unknown status %q", store.ErrInvalid, i, s.Status)
		case len(s.Output) > maxStageOutput:
			return fmt.Errorf("%w: stage state %d: output longer than %d bytes", store.ErrInvalid, i, maxStageOutput)
		}
		if err := validText(fmt.Sprintf("stage state %d", i), s.ISRC, s.Stage, s.InputHash, s.Output, s.Detail); err != nil {
			return err
		}
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: put stages: %w", err)
	}
	defer rollback(tx)
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO index_build_stages
        (isrc, stage, input_hash, status, output, detail, attempts, updated_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
        ON CONFLICT (isrc, stage) DO UPDATE SET
            input_hash = excluded.input_hash, status = excluded.status, output = excluded.output,
            detail = excluded.detail, attempts = excluded.attempts, updated_at = excluded.updated_at`)
	if err != nil {
		return fmt.Errorf("store: put stages: %w", err)
	}
	defer stmt.Close()
	at := db.d.time(now())
	for _, s := range states {
		if _, err := stmt.ExecContext(ctx, s.ISRC, s.Stage, s.InputHash, s.Status, s.Output, s.Detail, s.Attempts, at); err != nil {
			return fmt.Errorf("store: put stage %s/%s: %w", s.ISRC, s.Stage, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: put stages: %w", err)
	}
	return nil
}

var _ store.BuildStages = (*DB)(nil)
