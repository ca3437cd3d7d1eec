package music

import (
	"fmt"
	"io"
)

// ReadLibraryItems parses a library import file (format "jsonl" or "csv",
// as [Service.ImportLibrary] reads it) without writing anything, calling fn
// for each line: the item, or why the line is bad. An error from fn stops
// the read and is returned. `toolport index build --library FILE` uses it to
// know which tracks the file names.
func ReadLibraryItems(r io.Reader, format string, fn func(line int, it LibraryItem, err error) error) error {
	switch format {
	case "jsonl":
		return eachJSONLItem(r, fn)
	case "csv":
		return eachCSVItem(r, fn)
	}
	return fmt.Errorf("music: unknown library file format %q (want jsonl or csv)", format)
}
