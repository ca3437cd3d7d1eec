package version_test

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/version"
)

func TestFromBuildInfo(t *testing.T) {
	const rev = "f3a1fe1b672edafc9d517991c4512b0807babebf"
	tests := []struct {
		name     string
		bi       debug.BuildInfo
		want     version.Info
		short    string
		inString []string
	}{
		{
			name:     "release installed with go install",
			bi:       debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/toolport/toolport", Version: "v0.4.0"}},
			want:     version.Info{Module: "github.com/toolport/toolport", Version: "v0.4.0", GoVersion: "go1.26.8"},
			short:    "v0.4.0",
			inString: []string{"toolport v0.4.0", "revision unknown", "go1.26.8"},
		},
		{
			name: "checkout with uncommitted changes",
			bi: debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/toolport/toolport", Version: "v0.0.0-20261124212654-f3a1fe1b672e+dirty"},
				Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: "2026-11-24T21:26:54Z"}, {Key: "vcs.modified", Value: "true"}}},
			want: version.Info{Module: "github.com/toolport/toolport", Version: "v0.0.0-20261124212654-f3a1fe1b672e+dirty",
				Revision: rev, Time: "2026-11-24T21:26:54Z", Modified: true, GoVersion: "go1.26.8"},
			short:    "v0.0.0-20261124212654-f3a1fe1b672e+dirty",
			inString: []string{"revision " + rev + " (modified) 2026-11-24T21:26:54Z"},
		},
		{
			name: "stamped revision, no version",
			bi: debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/toolport/toolport", Version: "(devel)"},
				Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}},
			want:     version.Info{Module: "github.com/toolport/toolport", Version: "(devel)", Revision: rev, GoVersion: "go1.26.8"},
			short:    "(devel) (f3a1fe1b672e)",
			inString: []string{"toolport (devel)\nrevision " + rev + "\ngo1.26.8"},
		},
		{
			name:  "nothing known",
			bi:    debug.BuildInfo{},
			want:  version.Info{Version: "(devel)"},
			short: "(devel)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := version.FromBuildInfo(&tt.bi)
			if got != tt.want {
				t.Errorf("FromBuildInfo = %+v\nwant %+v", got, tt.want)
			}
			if s := got.Short(); s != tt.short {
				t.Errorf("Short() = %q, want %q", s, tt.short)
			}
			for _, sub := range tt.inString {
				if !strings.Contains(got.String(), sub) {
					t.Errorf("String() lacks %q:\n%s", sub, got.String())
				}
			}
		})
	}
}

// TestGet reads the test binary's own build information: the toolchain
// always records its version.
func TestGet(t *testing.T) {
	if got := version.Get(); !strings.HasPrefix(got.GoVersion, "go") || got.Version == "" {
		t.Errorf("Get() = %+v", got)
	}
}
