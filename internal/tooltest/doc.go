// Package tooltest holds helpers that the tests of several packs share:
// reading the recorded fixtures that live in other packages' testdata
// folders, and a local HTTP server on 127.0.0.1 that replays them and
// records what it was asked.
//
// It is for tests only; nothing outside _test.go files imports it.
package tooltest
