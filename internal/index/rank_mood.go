package index

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/toolport/toolport/internal/embedding"
)

// Audio features where a query names a mood or an energy.
//
// The features are those of Spotify's audio-features model, which
// ReccoBeats serves with the same names and 0–1 scales. Spotify's
// definitions (Web API reference, "Get Track's Audio Features") say:
//   - valence "describes the musical positiveness conveyed by a track.
//     Tracks with high valence sound more positive (e.g. happy, cheerful,
//     euphoric), while tracks with low valence sound more negative (e.g.
//     sad, depressed, angry)";
//   - energy "represents a perceptual measure of intensity and activity.
//     Typically, energetic tracks feel fast, loud, and noisy" (death metal
//     high, a Bach prelude low);
//   - danceability "describes how suitable a track is for dancing";
//   - acousticness is "a confidence measure … of whether the track is
//     acoustic";
//   - instrumentalness "predicts whether a track contains no vocals".
//
// moodWords maps the words of a query to those scales, from those
// definitions and nothing else. Tempo is left out: "slow" and "fast" are
// felt, and BPM estimates are often off by a factor of two.

// MoodTarget is one feature a query asks to be high or low.
type MoodTarget struct {
	Feature string // "valence", "energy", "danceability", "acousticness", "instrumentalness"
	High    bool
	Word    string // the query word that asked for it
}

type moodAim struct {
	feature string
	high    bool
}

var (
	valenceHigh = moodAim{"valence", true}
	valenceLow  = moodAim{"valence", false}
	energyHigh  = moodAim{"energy", true}
	energyLow   = moodAim{"energy", false}
	danceHigh   = moodAim{"danceability", true}
	acousHigh   = moodAim{"acousticness", true}
	instrHigh   = moodAim{"instrumentalness", true}
)

// moodWords is the word → feature table (query words, lower case, as
// [embedding.Words] splits them).
func moodWords() map[string][]moodAim {
	table := []struct {
		words []string
		aims  []moodAim
	}{
		// Positive: Spotify's own examples of high valence; upbeat and
		// joyful music is also active.
		{[]string{"happy", "joyful", "joyous", "cheerful", "euphoric", "upbeat", "uplifting"}, []moodAim{valenceHigh, energyHigh}},
		// Negative: Spotify's examples of low valence.
		{[]string{"sad", "melancholic", "melancholy", "mournful", "depressing", "depressed", "gloomy", "heartbroken", "sorrowful"}, []moodAim{valenceLow}},
		// Angry is low valence in Spotify's definition, and high energy.
		{[]string{"angry", "furious"}, []moodAim{valenceLow, energyHigh}},
		// Intensity and activity.
		{[]string{"energetic", "loud", "aggressive", "intense", "powerful"}, []moodAim{energyHigh}},
		{[]string{"calm", "chill", "relaxing", "relaxed", "peaceful", "soothing", "mellow", "quiet"}, []moodAim{energyLow}},
		{[]string{"dance", "danceable", "dancing", "dancey"}, []moodAim{danceHigh}},
		{[]string{"acoustic", "unplugged"}, []moodAim{acousHigh}},
		{[]string{"instrumental"}, []moodAim{instrHigh}},
	}
	m := map[string][]moodAim{}
	for _, row := range table {
		for _, w := range row.words {
			m[w] = row.aims
		}
	}
	return m
}

// moodNegators void a mood word among the three words before it in its
// clause ("not sad", "nothing too loud", "don't want it calm":
// [embedding.Words] splits "don't" into "don" and "t"; "no drums, happy" is
// two clauses).
var moodNegators = map[string]bool{"no": true, "not": true, "without": true, "never": true, "nothing": true,
	"nor": true, "neither": true, "t": true, "non": true, "less": true, "avoid": true}

// MoodTargets returns the features the query's mood and energy words ask
// for, in query order. A negated word asks for nothing (the opposite of
// "not sad" is not "happy"), and a feature asked both high and low is
// dropped ("happy or sad").
func MoodTargets(query string) []MoodTarget {
	query = ClipQuery(query)
	table := moodWords()
	var out []MoodTarget
	dir := map[string]int{} // feature → +1 high, −1 low, 2 both
	for clause := range strings.FieldsFuncSeq(query, isClauseBreak) {
		words := embedding.Words(clause)
		for i, w := range words {
			aims, ok := table[w]
			if !ok {
				continue
			}
			negated := false
			for k := max(0, i-3); k < i; k++ {
				negated = negated || moodNegators[words[k]]
			}
			if negated {
				continue
			}
			for _, a := range aims {
				d := -1
				if a.high {
					d = 1
				}
				switch prev, seen := dir[a.feature]; {
				case !seen:
					dir[a.feature] = d
					out = append(out, MoodTarget{Feature: a.feature, High: a.high, Word: w})
				case prev != d:
					dir[a.feature] = 2
				}
			}
		}
	}
	return slices.DeleteFunc(out, func(t MoodTarget) bool { return dir[t.Feature] == 2 })
}

func isClauseBreak(r rune) bool { return strings.ContainsRune(",;:.!?()\n", r) }

// MoodWeight bounds the score adjustment: a track whose features fit every
// target perfectly gains MoodWeight, one that fits none loses it, and one at
// the middle of every scale (or with no features) keeps its score. The
// hybrid score is 0–1 with the best text match near 1; over the MusicCaps
// dev and own held-out queries the median gap from the 1st to the 10th
// result is 0.29 and from the 5th to the 10th 0.08
// (TestMoodLeavesMusicCapsUnchanged), so
// 0.05 reorders neighbours with similar text scores and can lift a fitting
// track a few places, but never lets features outrank clearly better text.
// It cannot be tuned: no judged set with audio features is at hand.
const MoodWeight = 0.05

// FeatureValue returns a track's value of a feature (0–1), ok false when
// unknown.
type FeatureValue func(feature string) (float64, bool)

// MoodFit is how a track's known features fit targets: the adjustment to
// add to its score (in [−MoodWeight, MoodWeight]) and the values it used
// ("energy 0.91, valence 0.84"; "" when it knows none of them; value nil is
// a track without features). Each
// target's fit is the value (high) or 1 − value (low); the adjustment is
// MoodWeight·(2·mean fit − 1) over the targets the track has a value for.
func MoodFit(targets []MoodTarget, value FeatureValue) (float64, string) {
	if value == nil {
		return 0, ""
	}
	var sum float64
	var n int
	var why []string
	for _, t := range targets {
		v, ok := value(t.Feature)
		if !ok || math.IsNaN(v) {
			continue
		}
		v = min(max(v, 0), 1)
		fit := v
		if !t.High {
			fit = 1 - v
		}
		sum += fit
		n++
		why = append(why, fmt.Sprintf("%s %.2f", t.Feature, v))
	}
	if n == 0 {
		return 0, ""
	}
	return MoodWeight * (2*sum/float64(n) - 1), strings.Join(why, ", ")
}

// RerankByMood adds each hit's [MoodFit] to its score and sorts the hits
// again, best first (a stable sort: equal scores keep their order); hits
// whose track has no features keep their score. features returns a track's
// feature values, nil when it has none. With no targets, or no hit with
// features, the hits are returned as they are.
func RerankByMood(hits []Hit, targets []MoodTarget, features func(id string) FeatureValue) []Hit {
	if len(targets) == 0 || len(hits) == 0 {
		return hits
	}
	out := make([]Hit, len(hits))
	changed := false
	for i, h := range hits {
		out[i] = h
		if fv := features(h.ID); fv != nil {
			adj, _ := MoodFit(targets, fv)
			out[i].Score += adj
			changed = changed || adj != 0
		}
	}
	if !changed {
		return hits
	}
	slices.SortStableFunc(out, func(a, b Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return out
}

// MoodWords lists the mood and energy words the ranking recognises (the keys
// of its word → feature table), sorted: what a host can offer as completions
// for a mood, since these are the words that move a search.
func MoodWords() []string {
	words := slices.Collect(maps.Keys(moodWords()))
	slices.Sort(words)
	return words
}
