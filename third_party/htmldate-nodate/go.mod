module github.com/markusmobius/go-htmldate

go 1.26

require golang.org/x/net v0.62.0
