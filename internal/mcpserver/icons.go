package mcpserver

import (
	"embed"
	"encoding/base64"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Icons are small SVGs embedded in the binary and sent as data: URIs, so
// that a host shows them without fetching anything (hosts may refuse remote
// icons, and Toolport may run offline).
//
//go:embed icons/*.svg
var iconFiles embed.FS

// iconCache holds each icon's data: URI, encoded once.
var iconCache sync.Map // name → []mcp.Icon

// icon returns the icons for name (a pack, or "toolport" for the server
// itself); a pack without an icon of its own gets Toolport's.
func icon(name string) []mcp.Icon {
	if v, ok := iconCache.Load(name); ok {
		return v.([]mcp.Icon)
	}
	body, err := iconFiles.ReadFile("icons/" + name + ".svg")
	if err != nil {
		if name == serverIcon {
			return nil // cannot happen: the file is embedded; a test checks it
		}
		return icon(serverIcon)
	}
	icons := []mcp.Icon{{
		Source:   "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(body),
		MIMEType: "image/svg+xml",
		Sizes:    []string{"any"}, // scalable
	}}
	iconCache.Store(name, icons)
	return icons
}

// serverIcon names the icon of the server itself.
const serverIcon = "toolport"
