package index

// docFreq is how many documents contain term t.
func (x *BM25) docFreq(t string) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.postings[t])
}
