package robots_test

import (
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/robots"
)

func TestAllowed(t *testing.T) {
	tests := []struct {
		name   string
		robots string
		path   string
		want   bool
	}{
		{"empty file allows", "", "/x", true},
		{"no group for us or * allows", "User-agent: Other\nDisallow: /\n", "/x", true},
		{"star group applies", "User-agent: *\nDisallow: /private\n", "/private/a", false},
		{"star group prefix only", "User-agent: *\nDisallow: /private\n", "/public", true},
		{"named group beats star", "User-agent: *\nDisallow: /\n\nUser-agent: toolport\nDisallow: /x\n", "/y", true},
		{"token matched case-insensitively", "User-agent: TOOLPORT\nDisallow: /\n", "/y", false},
		{"token with version", "User-agent: Toolport/1.0\nDisallow: /\n", "/y", false},
		{"longer token is another crawler", "User-agent: ToolportX\nDisallow: /\n", "/y", true},
		{"groups for us are combined", "User-agent: toolport\nDisallow: /a\n\nUser-agent: other\nDisallow: /b\n\nUser-agent: toolport\nDisallow: /c\n", "/c", false},
		{"several agents share a group", "User-agent: a\nUser-agent: toolport\nDisallow: /z\n", "/z", false},
		{"rule ends the agent list", "User-agent: toolport\nDisallow: /a\nUser-agent: b\nDisallow: /z\n", "/z", true},
		{"rules before any agent are ignored", "Disallow: /\nUser-agent: toolport\nAllow: /\n", "/x", true},
		{"sitemap does not end a group", "User-agent: toolport\nSitemap: https://e.com/s.xml\nDisallow: /z\n", "/z", false},
		{"longest match wins", "User-agent: *\nDisallow: /a\nAllow: /a/b\n", "/a/b/c", true},
		{"longest match wins, disallow", "User-agent: *\nAllow: /a\nDisallow: /a/b\n", "/a/b/c", false},
		{"allow wins a tie", "User-agent: *\nDisallow: /a\nAllow: /a\n", "/a", true},
		{"allow wins a tie either order", "User-agent: *\nAllow: /a\nDisallow: /a\n", "/a", true},
		{"empty disallow matches nothing", "User-agent: *\nDisallow:\n", "/x", true},
		{"star in the middle", "User-agent: *\nDisallow: /*.php\n", "/dir/index.php?x=1", false},
		{"star misses", "User-agent: *\nDisallow: /*.php\n", "/dir/index.html", true},
		{"dollar anchors", "User-agent: *\nDisallow: /*.php$\n", "/index.php", false},
		{"dollar anchored misses longer", "User-agent: *\nDisallow: /*.php$\n", "/index.php?x", true},
		{"dollar without star", "User-agent: *\nDisallow: /exact$\n", "/exact/more", true},
		{"dollar in the middle is literal", "User-agent: *\nDisallow: /a$b\n", "/a$b/c", false},
		{"query is matched", "User-agent: *\nDisallow: /search?q=\n", "/search?q=go", false},
		{"comments are stripped", "User-agent: * # everyone\nDisallow: /x # not x\n", "/x", false},
		{"keys are case-insensitive", "USER-AGENT: *\nDISALLOW: /x\n", "/x", false},
		{"CR line ends", "User-agent: *\rDisallow: /x\r", "/x", false},
		{"CRLF line ends", "User-agent: *\r\nDisallow: /x\r\n", "/x", false},
		{"BOM is skipped", "\xEF\xBB\xBFUser-agent: *\nDisallow: /x\n", "/x", false},
		{"percent-encoded unreserved decoded in rule", "User-agent: *\nDisallow: /%62%61%7A\n", "/baz", false},
		{"percent-encoded unreserved decoded in path", "User-agent: *\nDisallow: /baz\n", "/%62az", false},
		{"UTF-8 rule matches encoded path", "User-agent: *\nDisallow: /foo/\u30c4\n", "/foo/%E3%83%84", false},
		{"encoded rule matches encoded path, any case", "User-agent: *\nDisallow: /foo/%e3%83%84\n", "/foo/%E3%83%84", false},
		{"reserved escape stays escaped", "User-agent: *\nDisallow: /a%2Fb\n", "/a/b", true},
		{"robots.txt is always allowed", "User-agent: *\nDisallow: /\n", "/robots.txt", true},
		{"disallow all", "User-agent: *\nDisallow: /\n", "/", false},
		{"lines without colon are skipped", "User-agent *\nnonsense\nUser-agent: *\nDisallow: /x\n", "/x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := robots.Parse([]byte(tt.robots), "Toolport").Allowed(tt.path)
			if got != tt.want {
				t.Errorf("Allowed(%q) = %v, want %v\nrobots.txt:\n%s", tt.path, got, tt.want, tt.robots)
			}
		})
	}
}

func TestParseReadsOnlyMaxSize(t *testing.T) {
	filler := "# " + strings.Repeat("x", 1000) + "\n"
	body := "User-agent: *\nDisallow: /early\n" + strings.Repeat(filler, robots.MaxSize/len(filler)+1) + "Disallow: /late\n"
	r := robots.Parse([]byte(body), "Toolport")
	if r.Allowed("/early") {
		t.Error("/early should be disallowed")
	}
	if !r.Allowed("/late") {
		t.Error("/late lies beyond MaxSize and should be ignored")
	}
}

func TestFixedRules(t *testing.T) {
	if robots.AllowAll().Allowed("/x") != true || robots.DisallowAll().Allowed("/x") != false {
		t.Error("AllowAll/DisallowAll do not say what they are named for")
	}
	if !robots.DisallowAll().Allowed("/robots.txt") {
		t.Error("/robots.txt must stay allowed")
	}
}

func TestProductToken(t *testing.T) {
	tests := map[string]string{
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Toolport/1.0": "Toolport",
		"MyBot/2.0 (+https://example.com/bot)":    "MyBot",
		"Mozilla/5.0 (compatible; Googlebot/2.1)": "Mozilla",
		"curl":          "curl",
		"":              "",
		"(only a note)": "",
		"bad.token/1":   "",
	}
	for ua, want := range tests {
		if got := robots.ProductToken(ua); got != want {
			t.Errorf("ProductToken(%q) = %q, want %q", ua, got, want)
		}
	}
}

// FuzzParse checks that no robots.txt makes Parse or Allowed panic or hang,
// that /robots.txt stays allowed whatever the file says, and that a
// literal rule disallows the path it spells.
func FuzzParse(f *testing.F) {
	f.Add("User-agent: *\nDisallow: /*.php$\nAllow: /a%2Fb\n", "/index.php?x=1")
	f.Add("User-agent: toolport\nDisallow: /\xff%\n", "/%")
	f.Add("user-agent:*\r\nallow:/*$*$\n", "/$")
	f.Fuzz(func(t *testing.T, body, path string) {
		r := robots.Parse([]byte(body), "Toolport")
		r.Allowed(path)
		if !r.Allowed("/robots.txt") {
			t.Fatal("/robots.txt disallowed")
		}
		// A rule that spells a path literally disallows that path.
		lit := "/" + strings.Map(func(r rune) rune {
			if strings.ContainsRune("\r\n#*$ \t\v\f", r) || r < ' ' {
				return -1
			}
			return r
		}, path)
		if len(lit) > 1<<10 || lit == "/robots.txt" {
			return
		}
		if robots.Parse([]byte("User-agent: toolport\nDisallow: "+lit+"\n"), "Toolport").Allowed(lit) {
			t.Fatalf("Disallow: %q does not disallow %q", lit, lit)
		}
	})
}
