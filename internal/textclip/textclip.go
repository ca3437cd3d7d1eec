// Package textclip bounds text that goes into messages, logs, spans and
// results. It is the one place Toolport cuts a string: every cut falls on a
// character boundary, so valid UTF-8 stays valid (a cut through a character
// would reach JSON as U+FFFD and a log as a broken byte).
//
// Cutting looks only at the part of the string that is kept, so its work is
// bounded by n whatever the length of s. Invalid UTF-8 is not repaired:
// callers that need valid text from untrusted bytes repair it first
// (strings.ToValidUTF8), which is linear in the whole input.
package textclip

import "unicode/utf8"

// Ellipsis marks a cut.
const Ellipsis = "…"

// Prefix returns the longest prefix of s of at most n bytes that ends on a
// character boundary. A negative n counts as 0.
func Prefix(s string, n int) string {
	if n < 0 {
		n = 0
	}
	if len(s) <= n {
		return s
	}
	// A character is at most utf8.UTFMax bytes: step back at most that far
	// (over continuation bytes), so that invalid input cannot make this
	// linear in n.
	for i := n; i > n-utf8.UTFMax && i >= 0; i-- {
		if i == 0 || utf8.RuneStart(s[i]) {
			return s[:i]
		}
	}
	return s[:n] // invalid input: no character starts near n
}

// Bytes returns s cut to at most n bytes on a character boundary, with
// [Ellipsis] appended when something was cut (so at most n+3 bytes).
func Bytes(s string, n int) string {
	return Mark(s, n, Ellipsis)
}

// Mark is [Bytes] with another marker: s cut to at most n bytes on a
// character boundary, followed by marker when something was cut.
func Mark(s string, n int, marker string) string {
	p := Prefix(s, n)
	if len(p) == len(s) {
		return s
	}
	return p + marker
}

// PrefixRunes returns the first n characters of s (each invalid byte counts
// as one). A negative n counts as 0.
func PrefixRunes(s string, n int) string {
	if n < 0 {
		n = 0
	}
	if len(s) <= n { // a character is at least one byte
		return s
	}
	i := 0
	for range n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if i >= len(s) {
			return s
		}
	}
	return s[:i]
}

// Runes returns the first n characters of s, with [Ellipsis] appended when
// something was cut, for text people and agents read (a 300-character
// description is 300 characters in Hebrew as in English).
func Runes(s string, n int) string {
	p := PrefixRunes(s, n)
	if len(p) == len(s) {
		return s
	}
	return p + Ellipsis
}
