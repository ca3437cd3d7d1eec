package webfetch

// Page exposes page to the tests.
var Page = page
