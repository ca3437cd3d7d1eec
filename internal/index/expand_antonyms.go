package index

// Word vectors place a word next to its opposite ("female" and "male" have a
// cosine of 0.93 in the default vectors, "slow" and "fast" 0.67, "scary" and
// "funny" 0.72): both occur in the same contexts. Expanding a query with its
// opposite turns "songs with a female singer" into a search for male singers
// too, so expansion never adds a term that is the opposite of a query word.
// The pairs are common English opposites among words that describe music:
// sex and age of voices, tempo, loudness, mood, brightness, register,
// quality, and contrasting moods.
func antonyms() map[string][]string {
	pairs := [][2]string{
		{"female", "male"}, {"woman", "man"}, {"women", "men"}, {"girl", "boy"},
		{"child", "adult"}, {"children", "adult"}, {"young", "old"},
		{"slow", "fast"}, {"slower", "faster"}, {"slow", "quick"}, {"slow", "rapid"},
		{"loud", "quiet"}, {"loud", "soft"}, {"loud", "gentle"}, {"noisy", "quiet"},
		{"happy", "sad"}, {"happi", "sad"}, {"joy", "sorrow"}, {"joyful", "sad"}, {"cheerful", "sad"},
		{"cheerful", "gloomy"}, {"happy", "unhappy"}, {"happy", "melancholic"},
		{"calm", "tense"}, {"calm", "agitat"}, {"calm", "angry"}, {"calm", "aggressive"},
		{"relax", "tense"}, {"peaceful", "aggressive"}, {"peaceful", "violent"},
		{"gentle", "harsh"}, {"gentle", "aggressive"}, {"gentle", "rough"},
		{"mellow", "aggressive"}, {"mellow", "harsh"},
		{"bright", "dark"}, {"light", "dark"}, {"light", "heavy"},
		{"high", "low"}, {"higher", "lower"}, {"high-pitch", "low-pitch"},
		{"major", "minor"}, {"simple", "complex"},
		{"amateur", "professional"}, {"good", "bad"}, {"best", "worst"},
		{"love", "hate"}, {"funny", "scary"}, {"funny", "sad"}, {"cute", "scary"}, {"goofy", "scary"},
		{"upbeat", "downbeat"}, {"upbeat", "sad"}, {"energetic", "calm"}, {"energetic", "relax"},
		{"acoustic", "electric"}, {"acoustic", "electronic"}, {"live", "studio"},
		{"instrumental", "vocal"}, {"modern", "old"}, {"new", "old"},
	}
	m := map[string][]string{}
	for _, p := range pairs {
		a, b := Stem(p[0]), Stem(p[1])
		m[a] = append(m[a], b)
		m[b] = append(m[b], a)
	}
	return m
}
