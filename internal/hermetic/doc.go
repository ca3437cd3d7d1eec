// Package hermetic holds repository-wide checks that Toolport stands alone:
// a plain clone, with nothing beside it, has every file its tests,
// benchmarks and scripts read. It has no code of its own, only tests.
package hermetic
