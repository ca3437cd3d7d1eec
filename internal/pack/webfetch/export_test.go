package webfetch

// Page exposes page to the tests.
var Page = page

// PageChars exposes pageChars to the tests.
var PageChars = pageChars

// PageCharsAtBreak exposes pageCharsAtBreak to the tests.
var PageCharsAtBreak = pageCharsAtBreak

// LooksLikeAppShell exposes looksLikeAppShell to the tests.
var LooksLikeAppShell = looksLikeAppShell
