package render

// SameDocument exposes sameDocument to the tests.
var SameDocument = sameDocument
