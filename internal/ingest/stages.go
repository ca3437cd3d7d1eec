package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolport/toolport/internal/index"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/textclip"
	"github.com/toolport/toolport/lrclib"
	"github.com/toolport/toolport/reccobeats"
)

// lyricsOut is the lyrics stage's stored output.
type lyricsOut struct {
	// Source is "lrclib" or "musixmatch" (whose free tier gives partial
	// lyrics: Partial).
	Source       string `json:"source,omitempty"`
	Partial      bool   `json:"partial,omitempty"`
	LRCLIBID     int64  `json:"lrclibId,omitempty"`
	Plain        string `json:"plain,omitempty"`
	Instrumental bool   `json:"instrumental,omitempty"`
}

// featuresOut is the features stage's stored output.
type featuresOut struct {
	ReccoBeatsID string               `json:"reccobeatsId,omitempty"`
	SpotifyID    string               `json:"spotifyId,omitempty"`
	Features     *store.AudioFeatures `json:"features,omitempty"`
}

// interpretationOut is the interpretation stage's stored output.
type interpretationOut struct {
	Text         string `json:"text"`
	Model        string `json:"model"`
	InputTokens  int64  `json:"inputTokens"`
	OutputTokens int64  `json:"outputTokens"`
}

// stageResult is what a stage's fetch returns.
type stageResult[T any] struct {
	out    T
	status string // store.StageDone or store.StageNone
	detail string
}

// runStage gives a stage's output for w: from its stored state when that
// is fresh (same input hash, not failed), else by calling fetch and storing
// the outcome at once. known is false in a dry run when the stage would
// run. A failure is stored too (so the report of a later run can tell), and
// returned; an interrupted fetch stores nothing.
func runStage[T any](ctx context.Context, r *run, w trackWork, name, hash string,
	fetch func(ctx context.Context) (stageResult[T], int, error)) (out T, status string, known bool, err error) {
	if st, ok := w.states[name]; ok && st.InputHash == hash && st.Status != store.StageFailed {
		if err := json.Unmarshal([]byte(st.Output), &out); err == nil || st.Output == "" {
			r.stage(name, func(c *StageCounts) { c.Cached++ })
			return out, st.Status, true, nil
		}
	}
	if r.dry {
		r.stage(name, func(c *StageCounts) { c.Planned++ })
		return out, "", false, nil
	}
	res, attempts, err := fetch(ctx)
	if ctx.Err() != nil {
		return out, "", false, ctx.Err()
	}
	if err != nil {
		st := store.StageState{ISRC: w.ISRC, Stage: name, InputHash: hash, Status: store.StageFailed, Detail: reason(err), Attempts: attempts}
		if perr := r.b.cfg.Store.PutStages(ctx, []store.StageState{st}); perr != nil {
			err = fmt.Errorf("%w (and saving the failure: %v)", err, perr)
		}
		r.fail(w.Track, name, err)
		return out, store.StageFailed, false, err
	}
	b, _ := json.Marshal(res.out)
	st := store.StageState{ISRC: w.ISRC, Stage: name, InputHash: hash, Status: res.status, Output: string(b), Detail: res.detail, Attempts: attempts}
	if err := r.b.cfg.Store.PutStages(ctx, []store.StageState{st}); err != nil {
		err = fmt.Errorf("saving the %s stage: %w", name, err)
		r.fail(w.Track, name, err)
		return out, store.StageFailed, false, err
	}
	r.stage(name, func(c *StageCounts) {
		if res.status == store.StageNone {
			c.None++
		} else {
			c.Done++
		}
	})
	return res.out, res.status, true, nil
}

// track runs the pipeline for one track.
func (r *run) track(ctx context.Context, w trackWork) {
	if ctx.Err() != nil {
		return
	}
	var (
		lyrics                   lyricsOut
		features                 featuresOut
		lyrStatus, featStatus    string
		lyrKnown, featKnown      bool
		lyrErr, featErr          error
		interpretation           string
		interpKnown              bool
		wg                       sync.WaitGroup
		lyricsHash, featuresHash = r.b.lyricsHash(w.Track), r.b.featuresHash(w.Track)
	)
	// Lyrics and features do not depend on each other: fetch both at once.
	wg.Go(func() {
		lyrics, lyrStatus, lyrKnown, lyrErr = runStage(ctx, r, w, StageLyrics, lyricsHash, func(ctx context.Context) (stageResult[lyricsOut], int, error) {
			return r.b.fetchLyrics(ctx, w.Track)
		})
	})
	wg.Go(func() {
		// Whatever the stage does, the track then no longer counts as one
		// that may join a features batch.
		var ticket featureTicket
		defer r.features.release(&ticket)
		features, featStatus, featKnown, featErr = runStage(ctx, r, w, StageFeatures, featuresHash, func(ctx context.Context) (stageResult[featuresOut], int, error) {
			return r.fetchFeatures(ctx, w.Track, &ticket)
		})
	})
	wg.Wait()
	if ctx.Err() != nil {
		return
	}
	anyFailed := lyrErr != nil || featErr != nil
	r.update(func(rep *Report) {
		if lyrStatus == store.StageNone {
			rep.NoLyrics++
			if lyrics.Instrumental {
				rep.Instrumental++
			}
		}
		if featStatus == store.StageNone {
			rep.NoFeatures++
		}
	})

	// The interpretation reads the lyrics: it waits for them.
	switch {
	case r.b.cfg.Model == nil:
		interpKnown = true
		r.stage(StageInterpretation, func(c *StageCounts) { c.Skipped++ })
	case lyrErr != nil:
		r.stage(StageInterpretation, func(c *StageCounts) { c.Skipped++ })
	case !lyrKnown:
		r.stage(StageInterpretation, func(c *StageCounts) { c.Planned++ })
	default:
		hash := r.b.interpretationHash(w.Track, lyrics)
		out, _, known, err := runStage(ctx, r, w, StageInterpretation, hash, func(ctx context.Context) (stageResult[interpretationOut], int, error) {
			return r.b.interpret(ctx, r, w.Track, lyrics)
		})
		if ctx.Err() != nil {
			return
		}
		interpretation, interpKnown = out.Text, known
		anyFailed = anyFailed || err != nil
	}

	switch {
	case anyFailed:
		r.stage(StageEmbedding, func(c *StageCounts) { c.Skipped++ })
	case !lyrKnown || !featKnown || !interpKnown:
		r.stage(StageEmbedding, func(c *StageCounts) { c.Planned++ })
	default:
		r.embed(ctx, w, lyrics, features, interpretation)
	}
	r.update(func(rep *Report) { rep.Processed++ })
}

// embed writes the track's index record, embedded, unless the index
// already holds the same content from the same embedder.
func (r *run) embed(ctx context.Context, w trackWork, lyrics lyricsOut, features featuresOut, interpretation string) {
	t := w.Track
	rec := store.IndexRecord{ISRC: t.ISRC, Title: t.Title, Artist: t.Artist, Album: t.Album, ArtworkURL: t.ArtworkURL,
		Duration: t.Duration, Lyrics: lyrics.Plain, Interpretation: interpretation, AudioFeatures: features.Features}
	rec.ContentHash = r.b.cfg.RecordHash(rec)
	emb := r.b.cfg.Embedder
	if w.index.ContentHash == rec.ContentHash && w.index.Embedder == emb.Name() && w.index.Dims == emb.Dimensions() && w.index.Dims > 0 {
		r.update(func(rep *Report) {
			rep.Stages[StageEmbedding].Cached++
			rep.Unchanged++
		})
		return
	}
	if r.dry {
		r.stage(StageEmbedding, func(c *StageCounts) { c.Planned++ })
		return
	}
	text := index.EmbeddingText(index.Fields{Title: rec.Title, Artist: rec.Artist, Album: rec.Album, Interpretation: rec.Interpretation, Lyrics: rec.Lyrics})
	var vecs [][]float32
	_, err := r.b.gates[UpstreamEmbedder].do(ctx, func(ctx context.Context) error {
		var err error
		vecs, err = emb.Embed(ctx, []string{text})
		return err
	})
	if err == nil && len(vecs) != 1 {
		err = fmt.Errorf("the embedder returned %d vectors for 1 text", len(vecs))
	}
	if err == nil {
		rec.Embedding, rec.Embedder = vecs[0], emb.Name()
		if err = r.b.cfg.Store.UpsertIndex(ctx, []store.IndexRecord{rec}); err != nil {
			err = fmt.Errorf("writing the index: %w", err)
		}
	}
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		r.fail(t, StageEmbedding, err)
		return
	}
	r.update(func(rep *Report) {
		rep.Stages[StageEmbedding].Done++
		rep.Indexed++
	})
}

// Input hashes: what each stage's result depends on, and the version of
// the method. A change makes the stored result stale.
func (b *Builder) lyricsHash(t store.Track) string {
	// With Musixmatch configured, a miss may be found: configuring a key
	// makes the stored misses stale.
	if b.cfg.Musixmatch != nil {
		return hashOf("lyrics/lrclib+musixmatch/1", t.ISRC, t.Title, t.Artist, t.Album, math.Round(t.Duration))
	}
	return hashOf("lyrics/lrclib/1", t.Title, t.Artist, t.Album, math.Round(t.Duration))
}

func (b *Builder) featuresHash(t store.Track) string {
	return hashOf("features/reccobeats/1", t.ISRC, t.Title)
}

func (b *Builder) interpretationHash(t store.Track, l lyricsOut) string {
	return hashOf(PromptVersion, interpretationPrompt, b.cfg.ModelName, t.Title, t.Artist, t.Album, l.Plain, l.Instrumental)
}

// fetchLyrics asks LRCLIB for the track by its signature, then, on a miss,
// searches by title and artist and keeps a record within ±2 s of the
// track's duration. No record and instrumental records are normal outcomes.
func (b *Builder) fetchLyrics(ctx context.Context, t store.Track) (stageResult[lyricsOut], int, error) {
	var res stageResult[lyricsOut]
	g := b.gates[UpstreamLRCLIB]
	d := time.Duration(t.Duration * float64(time.Second))
	var rec *lrclib.Record
	calls, err := g.do(ctx, func(ctx context.Context) error {
		var err error
		rec, err = b.cfg.Lyrics.Get(ctx, &lrclib.GetParams{TrackName: t.Title, ArtistName: t.Artist, AlbumName: t.Album, Duration: d})
		return err
	})
	if errors.Is(err, lrclib.ErrNotFound) {
		var rs []lrclib.Record
		n, serr := g.do(ctx, func(ctx context.Context) error {
			var err error
			rs, err = b.cfg.Lyrics.Search(ctx, &lrclib.SearchParams{TrackName: t.Title, ArtistName: t.Artist})
			return err
		})
		calls += n
		if serr != nil {
			return res, calls, fmt.Errorf("LRCLIB search: %w", serr)
		}
		rec, err = pickRecord(rs, t.Title, d), nil
		if rec == nil {
			return b.musixmatchLyrics(ctx, t, calls)
		}
	}
	if err != nil {
		return res, calls, err
	}
	res.out.LRCLIBID, res.out.Source = rec.ID, UpstreamLRCLIB
	switch {
	case rec.Instrumental:
		res.out.Instrumental = true
		res.status, res.detail = store.StageNone, "instrumental"
	case !rec.HasLyrics():
		res.status, res.detail = store.StageNone, "the LRCLIB record has no lyrics"
	default:
		plain := rec.PlainLyrics
		if strings.TrimSpace(plain) == "" {
			plain = stripLRC(rec.SyncedLyrics)
		}
		res.out.Plain = textclip.Prefix(strings.TrimSpace(plain), maxLyricsBytes)
		res.status = store.StageDone
	}
	return res, calls, nil
}

// musixmatchLyrics asks Musixmatch, when configured, for lyrics LRCLIB
// does not have.
func (b *Builder) musixmatchLyrics(ctx context.Context, t store.Track, calls int) (stageResult[lyricsOut], int, error) {
	var res stageResult[lyricsOut]
	if b.cfg.Musixmatch == nil {
		res.status, res.detail = store.StageNone, "no lyrics on LRCLIB"
		return res, calls, nil
	}
	var text string
	var partial bool
	n, err := b.gates[UpstreamMusixmatch].do(ctx, func(ctx context.Context) error {
		var err error
		text, partial, err = b.cfg.Musixmatch.LyricsByISRC(ctx, t.ISRC)
		return err
	})
	calls += n
	switch {
	case errors.Is(err, ErrMusixmatchNotFound):
		res.status, res.detail = store.StageNone, "no lyrics on LRCLIB or Musixmatch"
		return res, calls, nil
	case err != nil:
		return res, calls, err
	}
	res.out = lyricsOut{Source: UpstreamMusixmatch, Partial: partial, Plain: text}
	res.status = store.StageDone
	return res, calls, nil
}

// pickRecord chooses among search results: records with lyrics (or
// instrumental) within ±2 s of d when d is known, the one with the same
// title first.
func pickRecord(rs []lrclib.Record, title string, d time.Duration) *lrclib.Record {
	var cands []lrclib.Record
	if d > 0 {
		cands = lrclib.MatchDuration(rs, d)
	} else {
		for _, r := range rs {
			if r.HasLyrics() || r.Instrumental {
				cands = append(cands, r)
			}
		}
	}
	if len(cands) == 0 {
		return nil
	}
	norm := func(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }
	for i := range cands {
		if norm(cands[i].TrackName) == norm(title) {
			return &cands[i]
		}
	}
	return &cands[0]
}

var lrcTag = regexp.MustCompile(`^\s*(\[[0-9:.]+\]\s*)+`)

// stripLRC turns synced lyrics into plain ones.
func stripLRC(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(lrcTag.ReplaceAllString(l, ""), " \r")
	}
	return strings.Join(lines, "\n")
}

// fetchFeatures finds the track in ReccoBeats by ISRC (it takes Spotify or
// ReccoBeats ids, not ISRCs: a title search keeps the rows with our ISRC),
// then asks for the audio features of the ids found, in a call shared with
// other tracks (the batcher), and joins the answer on the Spotify id in its
// href (rows may be reordered or left out: a track left out has none).
func (r *run) fetchFeatures(ctx context.Context, t store.Track, ticket *featureTicket) (stageResult[featuresOut], int, error) {
	var res stageResult[featuresOut]
	var matches []reccobeats.Track
	calls, err := r.b.gates[UpstreamReccoBeats].do(ctx, func(ctx context.Context) error {
		var err error
		matches, err = r.b.cfg.Features.FindByISRC(ctx, t.ISRC, t.Title)
		return err
	})
	if errors.Is(err, reccobeats.ErrNotFound) {
		res.status, res.detail = store.StageNone, "not in the ReccoBeats catalogue"
		return res, calls, nil
	}
	if err != nil {
		return res, calls, err
	}
	var ids []string
	for _, m := range matches {
		id := m.SpotifyID()
		if id == "" && reccobeats.IsReccoBeatsID(m.ID) {
			id = m.ID
		}
		if id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
		if len(ids) == reccobeats.MaxIDs {
			break
		}
	}
	if len(ids) == 0 {
		res.status, res.detail = store.StageNone, "the ReccoBeats track has no usable id"
		return res, calls, nil
	}
	rows, n, err := r.features.features(ctx, ticket, ids)
	calls += n
	if err != nil {
		return res, calls, err
	}
	bySpotify := reccobeats.BySpotifyID(rows)
	for _, m := range matches {
		f, ok := bySpotify[m.SpotifyID()]
		if !ok {
			for _, row := range rows {
				if row.ID != "" && row.ID == m.ID {
					f, ok = row, true
					break
				}
			}
		}
		if ok {
			res.out = featuresOut{ReccoBeatsID: m.ID, SpotifyID: m.SpotifyID(), Features: audioFeatures(f)}
			res.status = store.StageDone
			return res, calls, nil
		}
	}
	res.status, res.detail = store.StageNone, "ReccoBeats has no audio features for the track"
	return res, calls, nil
}

// audioFeatures converts ReccoBeats' row, leaving out values outside their
// documented ranges (the index refuses them; an estimate that far off is
// noise).
func audioFeatures(f reccobeats.AudioFeatures) *store.AudioFeatures {
	in := func(v, lo, hi float64) *float64 {
		if math.IsNaN(v) || v < lo || v > hi {
			return nil
		}
		return &v
	}
	return &store.AudioFeatures{
		Acousticness: in(f.Acousticness, 0, 1), Danceability: in(f.Danceability, 0, 1), Energy: in(f.Energy, 0, 1),
		Instrumentalness: in(f.Instrumentalness, 0, 1), Key: in(float64(f.Key), -1, 11), Liveness: in(f.Liveness, 0, 1),
		Loudness: in(f.Loudness, -100, 10), Mode: in(float64(f.Mode), 0, 1), Speechiness: in(f.Speechiness, 0, 1),
		Tempo: in(f.Tempo, 0, 400), Valence: in(f.Valence, 0, 1),
	}
}

// interpret asks the model for the track's interpretation.
func (b *Builder) interpret(ctx context.Context, r *run, t store.Track, l lyricsOut) (stageResult[interpretationOut], int, error) {
	var res stageResult[interpretationOut]
	var sb strings.Builder
	fmt.Fprintf(&sb, "Title: %s\nArtist: %s\n", t.Title, t.Artist)
	if t.Album != "" {
		fmt.Fprintf(&sb, "Album: %s\n", t.Album)
	}
	switch {
	case l.Instrumental:
		sb.WriteString("Lyrics: none (instrumental)\n")
	case l.Plain == "":
		sb.WriteString("Lyrics: not found\n")
	default:
		sb.WriteString("Lyrics:\n" + textclip.Prefix(l.Plain, 8000) + "\n")
	}
	req := llm.Request{System: interpretationPrompt, Messages: []llm.Message{llm.UserText(sb.String())}, MaxTokens: interpretationTokens}
	var resp *llm.Response
	calls, err := b.gates[UpstreamModel].do(ctx, func(ctx context.Context) error {
		s, err := b.cfg.Model.Stream(ctx, req)
		if err != nil {
			return err
		}
		got, err := llm.Collect(s)
		if got != nil {
			r.update(func(rep *Report) {
				rep.Tokens.Input += got.Usage.InputTokens
				rep.Tokens.Output += got.Usage.OutputTokens
			})
		}
		resp = got
		return err
	})
	if err != nil {
		return res, calls, err
	}
	text := strings.TrimSpace(resp.Message.Text())
	if text == "" {
		return res, calls, errors.New("the model wrote no interpretation")
	}
	res.out = interpretationOut{Text: textclip.Prefix(text, maxInterpretationBytes), Model: b.cfg.ModelName,
		InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens}
	res.status = store.StageDone
	return res, calls, nil
}
