// Package bench is where Toolport's measurement programs live, all in one
// place; BENCHMARKS.md gives each figure with the command that reproduces it,
// and scripts/bench runs those commands to regenerate the page.
//
//	cmd/benchtab        go test -bench output → a Markdown table (median, min–max,
//	                    ratios to a baseline or peer from the same run)
//	cmd/binsize         what the toolport binary is made of, by package
//	cmd/startup-bench   start-up of every executable against a base revision
//	cmd/amplify         one oversized tool call: response, logs, server peak RSS
//	cmd/mcpload         /mcp under many sessions and batches: status, peak RSS
//	cmd/fetchload       web_fetch on large pages in parallel: outcomes, peak RSS
//	turnload            chat turns against a real `toolport serve` (a benchmark)
//	proc                what the programs share: starting `toolport serve`, /proc figures
package bench
