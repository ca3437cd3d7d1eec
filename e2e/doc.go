// Package e2e holds end-to-end tests that run the real toolport binary as a
// process and drive it from outside, as a person or a client would.
//
// The browser tests build `toolport`, prepare a music index and library with
// its own CLI, start `toolport serve` against a scripted language model
// (server/servertest) and a failing local web server, and run the Discover
// Chat page checks of webui/webuitest in a headless Chromium (Debian's
// chromium package; CHROMIUM_PATH overrides). Screenshots go to
// $TOOLPORT_ARTIFACTS_DIR when it is set, otherwise to the test's temporary
// directory. Everything runs on 127.0.0.1; nothing reaches another host.
//
// The package has no API: it exists for its tests.
package e2e
