// Package version says which build of Toolport is running: the main module's
// version and the VCS revision it was built from, as the Go toolchain stamped
// them into the binary.
package version

import (
	"runtime/debug"
	"strings"
)

// Info describes a build.
type Info struct {
	// Module is the main module's path.
	Module string
	// Version is the main module's version: a release ("v0.4.0") when built
	// with `go install module@version`, a pseudo-version derived from the VCS
	// when built inside a checkout, or "(devel)" when nothing better is known.
	Version string
	// Revision is the VCS commit the binary was built from, "" when the build
	// was not stamped (e.g. -buildvcs=false, or built outside a checkout).
	Revision string
	// Time is the commit time (RFC 3339), "" when unknown.
	Time string
	// Modified says the working tree had uncommitted changes.
	Modified bool
	// GoVersion is the toolchain that built the binary.
	GoVersion string
}

// Get reads the running binary's build information.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: "(devel)"}
	}
	return FromBuildInfo(bi)
}

// FromBuildInfo extracts an Info from build information.
func FromBuildInfo(bi *debug.BuildInfo) Info {
	i := Info{Module: bi.Main.Path, Version: bi.Main.Version, GoVersion: bi.GoVersion}
	if i.Version == "" {
		i.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Revision = s.Value
		case "vcs.time":
			i.Time = s.Value
		case "vcs.modified":
			i.Modified = s.Value == "true"
		}
	}
	return i
}

// Short is a one-line label for a page footer or an MCP server's version:
// the module version, with the short revision when the version does not
// already carry it, and "+dirty" for a modified tree. It reveals no paths.
func (i Info) Short() string {
	s := i.Version
	if rev := shortRevision(i.Revision); rev != "" && !strings.Contains(s, rev) {
		s += " (" + rev + ")"
	}
	if i.Modified && !strings.HasSuffix(i.Version, "+dirty") {
		s += "+dirty"
	}
	return s
}

// String is the full description printed by `toolport --version`.
func (i Info) String() string {
	var b strings.Builder
	b.WriteString("toolport ")
	b.WriteString(i.Version)
	if i.Revision != "" {
		b.WriteString("\nrevision ")
		b.WriteString(i.Revision)
		if i.Modified {
			b.WriteString(" (modified)")
		}
		if i.Time != "" {
			b.WriteString(" ")
			b.WriteString(i.Time)
		}
	} else {
		b.WriteString("\nrevision unknown (not built from a git checkout, or built with -buildvcs=false)")
	}
	if i.GoVersion != "" {
		b.WriteString("\n")
		b.WriteString(i.GoVersion)
	}
	return b.String()
}

func shortRevision(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
