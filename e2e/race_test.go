//go:build race

package e2e_test

// raceEnabled says the tests run with the race detector, so the binary under
// test is built with it too.
const raceEnabled = true
