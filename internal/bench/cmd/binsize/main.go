// Command binsize says what takes room in a Go binary: its ELF sections, and
// the sizes of its symbols (go tool nm -size) added up by package and by
// module, so that a dependency's cost can be read in megabytes.
//
//	go run ./internal/bench/cmd/binsize [-n 20] [BINARY]
//
// Without BINARY it builds ./cmd/toolport (plain `go build`) into a temporary
// directory first. Symbols that belong to no package (the runtime's function
// tables, go:func.*, strings) are counted under "(metadata)"; the part of
// the file no symbol covers (pclntab, DWARF, headers) is shown from the
// section table. bss symbols take no room in the file and are left out.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"debug/buildinfo"
	"debug/elf"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func main() {
	n := flag.Int("n", 20, "how many packages and modules to show")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./internal/bench/cmd/binsize [-n 20] [BINARY]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if err := run(os.Stdout, flag.Arg(0), *n); err != nil {
		fmt.Fprintln(os.Stderr, "binsize:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, bin string, n int) error {
	if bin == "" {
		dir, err := os.MkdirTemp("", "binsize")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		bin = filepath.Join(dir, "toolport")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/toolport")
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build: %w", err)
		}
	}
	info, err := os.Stat(bin)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: %s\n\n", bin, mb(info.Size()))
	if err := sections(w, bin); err != nil {
		return err
	}
	out, err := exec.Command("go", "tool", "nm", "-size", "-sort", "size", bin).Output()
	if err != nil {
		return fmt.Errorf("go tool nm: %w", err)
	}
	nobits, err := nobitsRanges(bin)
	if err != nil {
		return err
	}
	byPkg, total := sizesByPackage(out, nobits)
	modules, err := modulePaths(bin)
	if err != nil {
		return err
	}
	byMod := map[string]int64{}
	for pkg, size := range byPkg {
		byMod[moduleOf(pkg, modules)] += size
	}
	fmt.Fprintf(w, "\nsymbols in the file: %s\n", mb(total))
	table(w, "package", byPkg, total, n)
	table(w, "module", byMod, total, n)
	return nil
}

// sections prints the ELF sections that occupy the file, largest first.
func sections(w io.Writer, bin string) error {
	f, err := elf.Open(bin)
	if err != nil {
		return fmt.Errorf("%s: %w (binsize reads ELF binaries)", bin, err)
	}
	defer f.Close()
	type sec struct {
		name string
		size int64
	}
	var secs []sec
	var dwarf int64
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOBITS || s.Size == 0 {
			continue
		}
		if strings.HasPrefix(s.Name, ".debug_") || strings.HasPrefix(s.Name, ".zdebug_") {
			dwarf += int64(s.FileSize)
			continue
		}
		secs = append(secs, sec{s.Name, int64(s.FileSize)})
	}
	secs = append(secs, sec{"DWARF (.debug_*)", dwarf})
	slices.SortFunc(secs, func(a, b sec) int { return cmp.Compare(b.size, a.size) })
	fmt.Fprintln(w, "sections:")
	for _, s := range secs {
		if s.size >= 64<<10 {
			fmt.Fprintf(w, "  %-20s %9s\n", s.name, mb(s.size))
		}
	}
	return nil
}

// addrRange is a [start, end) range of virtual addresses.
type addrRange struct{ start, end uint64 }

// nobitsRanges returns the address ranges of the sections that take no room
// in the file (.bss, .noptrbss): nm calls some of their symbols D, not B.
func nobitsRanges(bin string) ([]addrRange, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rs []addrRange
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOBITS {
			rs = append(rs, addrRange{s.Addr, s.Addr + s.Size})
		}
	}
	return rs, nil
}

// sizesByPackage adds up the sizes in `go tool nm -size` output by package,
// leaving out symbols whose address falls in one of nobits.
func sizesByPackage(nm []byte, nobits []addrRange) (map[string]int64, int64) {
	by := map[string]int64{}
	var total int64
	sc := bufio.NewScanner(bytes.NewReader(nm))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		// "  addr  size type name", where name may contain spaces.
		f := strings.Fields(sc.Text())
		if len(f) < 4 {
			continue
		}
		size, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil || size == 0 {
			continue
		}
		addr, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil || slices.ContainsFunc(nobits, func(r addrRange) bool { return addr >= r.start && addr < r.end }) {
			continue
		}
		switch f[2] {
		case "T", "t", "R", "r", "D", "d":
		default: // B, b (bss: no room in the file), U (undefined)
			continue
		}
		name := strings.Join(f[3:], " ")
		by[packageOf(name)] += size
		total += size
	}
	return by, total
}

var versionSuffix = regexp.MustCompile(`^v[0-9]+(\.|$)`)

// packageOf returns the import path of the package a symbol belongs to, or
// "(metadata)" for the linker's and runtime's tables.
func packageOf(sym string) string {
	for _, p := range []string{"type:.eq.", "type:.hash.", "type:.namedata.", "type:.importpath.", "type:", "go:itab."} {
		if strings.HasPrefix(sym, p) {
			sym = strings.TrimLeft(strings.TrimPrefix(sym, p), "*[]0123456789")
			break
		}
	}
	if strings.HasPrefix(sym, "go:") || strings.HasPrefix(sym, "runtime.") && strings.Contains(sym, "tab") && !strings.Contains(sym, "(") {
		return "(metadata)"
	}
	if i := strings.IndexAny(sym, "[( ,;{"); i >= 0 {
		sym = sym[:i] // generics and method receivers
	}
	// An import path is segments joined by '/'; the first segment (a
	// domain) may hold dots, and in any later one the first dot ends the
	// path. Scanning from the left matters: an unexported method's name is
	// qualified with its package ("T.example.com/p.m"), so the last '/' can
	// be past the end of the path.
	parts := strings.Split(sym, "/")
	if len(parts) == 1 {
		pkg, _, _ := strings.Cut(sym, ".")
		if pkg == "" || !strings.ContainsAny(pkg, "abcdefghijklmnopqrstuvwxyz") {
			return "(metadata)"
		}
		return pkg
	}
	path, parts := parts[0], parts[1:]
	if path == "vendor" { // the standard library's vendored golang.org/x
		path, parts = "vendor/"+parts[0], parts[1:]
	}
	for _, seg := range parts {
		name, rest, ok := strings.Cut(seg, ".")
		if !ok {
			path += "/" + seg
			continue
		}
		// gopkg.in/yaml.v3: a ".vN" right after the name is part of the path.
		if m := versionSuffix.FindString(rest); m != "" {
			name += "." + strings.TrimSuffix(m, ".")
		}
		return path + "/" + name
	}
	return path
}

// modulePaths lists the main module and the dependencies recorded in bin.
func modulePaths(bin string) ([]string, error) {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("reading build info: %w", err)
	}
	paths := []string{bi.Main.Path}
	for _, d := range bi.Deps {
		paths = append(paths, d.Path)
	}
	return paths, nil
}

// moduleOf returns the module that provides pkg: the longest module path that
// is pkg or a parent of it; "std" for the standard library.
func moduleOf(pkg string, modules []string) string {
	best := ""
	for _, m := range modules {
		if (pkg == m || strings.HasPrefix(pkg, m+"/")) && len(m) > len(best) {
			best = m
		}
	}
	switch {
	case best != "":
		return best
	case strings.HasPrefix(pkg, "("):
		return pkg
	case strings.HasPrefix(pkg, "vendor/") || !strings.Contains(strings.SplitN(pkg, "/", 2)[0], "."):
		return "std"
	}
	return pkg
}

func table(w io.Writer, what string, by map[string]int64, total int64, n int) {
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(by[b], by[a]), strings.Compare(a, b)) })
	fmt.Fprintf(w, "\ntop %d of %d by %s:\n", min(n, len(keys)), len(keys), what)
	for _, k := range keys[:min(n, len(keys))] {
		fmt.Fprintf(w, "  %9s %5.1f%%  %s\n", mb(by[k]), 100*float64(by[k])/float64(total), k)
	}
}

func mb(n int64) string { return fmt.Sprintf("%.2f MB", float64(n)/1e6) }
