//go:build !linux

package metric

// Process returns a collector of the process's figures; outside Linux it
// has none to give.
func Process() Collector { return process{} }

type process struct{}

func (process) familyNames() []string { return nil }
func (process) collect(*scrape)       {}
