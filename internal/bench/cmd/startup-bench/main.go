// Command startup-bench measures how long every executable takes to start,
// side by side with a hello-world Go binary built in the same run.
//
//	go run ./internal/bench/cmd/startup-bench [-rounds 21] [-base REV] [-callgrind=true] [-keep DIR]
//
// It builds a hello world (fmt.Println) and ./cmd/... with the same
// toolchain, then runs each command below (the ikigai executables with
// --schema, `toolport --help`, `toolport version` and `toolport list`) with HOME pointing at an
// empty directory and no other environment than PATH:
//
//   - instructions, once per command, from
//     GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind (all threads),
//     which repeat within a few percent however loaded the machine is;
//   - CPU time (user + system, from the child's rusage), wall time and peak
//     RSS over -rounds interleaved rounds (every command once per round, in
//     a rotating order, after one warm-up round): median and min–max.
//
// Each figure is also given as a multiple of hello world's. With -base REV
// the same commands are built from that revision too (git archive into a
// temporary directory) and measured in the same rounds, so that before and
// after come from one run. A command that exits non-zero or prints nothing
// stops the run: a figure of a failing start is worth nothing.
//
// The callgrind files are kept in -keep DIR (when given) for
// `callgrind_annotate --inclusive=yes FILE`.
package main

import (
	"bytes"
	"cmp"
	"errors"
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
	"syscall"
	"time"
)

// target is the ratio to hello world each command must stay within.
const target = 10

const hello = `package main

import "fmt"

func main() { fmt.Println("hello, world") }
`

func main() {
	rounds := flag.Int("rounds", 21, "interleaved timing rounds (after one warm-up round)")
	base := flag.String("base", "", "also build and measure this git revision (before/after in one run)")
	callgrind := flag.Bool("callgrind", true, "count instructions with valgrind's callgrind")
	keep := flag.String("keep", "", "keep the binaries and callgrind files in this directory")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./internal/bench/cmd/startup-bench [-rounds 21] [-base REV] [-callgrind=true] [-keep DIR]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if err := run(os.Stdout, *rounds, *base, *callgrind, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "startup-bench:", err)
		os.Exit(1)
	}
}

// command is one start-up to measure.
type command struct {
	label string   // as shown: "web-fetch-tool --schema (base)"
	argv  []string // binary and arguments
	instr int64    // callgrind instructions; 0 when not counted
	cpu   []time.Duration
	wall  []time.Duration
	rss   []int64 // KiB
}

func run(w io.Writer, rounds int, base string, callgrind bool, keep string) error {
	if rounds < 1 {
		return errors.New("-rounds must be at least 1")
	}
	dir := keep
	if dir == "" {
		d, err := os.MkdirTemp("", "startup-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if callgrind {
		if _, err := exec.LookPath("valgrind"); err != nil {
			return errors.New("valgrind not found (install it, or pass -callgrind=false)")
		}
	}
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}

	helloBin, err := buildHello(dir)
	if err != nil {
		return err
	}
	cmds := []*command{{label: "hello world (fmt.Println)", argv: []string{helloBin}}}
	head, err := buildCommands(".", filepath.Join(dir, "head"))
	if err != nil {
		return err
	}
	var before []*command
	if base != "" {
		src := filepath.Join(dir, "base-src")
		if err := exportRevision(base, src); err != nil {
			return err
		}
		bin, err := buildCommands(src, filepath.Join(dir, "base"))
		if err != nil {
			return err
		}
		before = commandsIn(bin, " ("+base+")")
	}
	after := commandsIn(head, "")
	// Base and head of one command side by side.
	for _, a := range after {
		for _, b := range before {
			if strings.TrimSuffix(b.label, " ("+base+")") == a.label {
				cmds = append(cmds, b)
			}
		}
		cmds = append(cmds, a)
	}

	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	for _, c := range cmds {
		if err := check(c, env); err != nil {
			return err
		}
	}
	load0 := loadAverage()
	if callgrind {
		for i, c := range cmds {
			out := filepath.Join(dir, fmt.Sprintf("callgrind.%02d.%s", i, slug(c.label)))
			n, err := instructions(c, env, out)
			if err != nil {
				return err
			}
			c.instr = n
		}
	}
	for r := -1; r < rounds; r++ {
		for i := range cmds {
			// Rotate the order so that no command always runs right after
			// the same neighbour (caches, frequency).
			c := cmds[(i+max(r, 0))%len(cmds)]
			cpu, wall, rss, err := timeOnce(c, env)
			if err != nil {
				return err
			}
			if r >= 0 {
				c.cpu, c.wall, c.rss = append(c.cpu, cpu), append(c.wall, wall), append(c.rss, rss)
			}
		}
	}
	report(w, cmds, rounds, load0, loadAverage(), callgrind)
	if keep != "" {
		fmt.Fprintf(w, "\nBinaries and callgrind files: %s (callgrind_annotate --inclusive=yes FILE)\n", dir)
	}
	return nil
}

func buildHello(dir string) (string, error) {
	src := filepath.Join(dir, "hello-src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module hello\n\ngo 1.22\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(hello), 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "hello")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = src
	// The hello world is a module of its own: keep the repository's
	// workspace or flags out of it.
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building hello world: %v\n%s", err, out)
	}
	return bin, nil
}

// buildCommands builds every command of the module in src into out.
func buildCommands(src, out string) (string, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	cmd := exec.Command("go", "build", "-buildvcs=false", "-o", out+string(filepath.Separator), "./cmd/...")
	cmd.Dir = src
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s/cmd/...: %v\n%s", src, err, b)
	}
	return out, nil
}

func exportRevision(rev, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	archive := exec.Command("git", "archive", "--format=tar", rev)
	untar := exec.Command("tar", "-x", "-C", dst)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	untar.Stdin = pipe
	var stderr bytes.Buffer
	archive.Stderr, untar.Stderr = &stderr, &stderr
	if err := untar.Start(); err != nil {
		return err
	}
	if err := archive.Run(); err != nil {
		untar.Wait()
		return fmt.Errorf("git archive %s: %v\n%s", rev, err, stderr.Bytes())
	}
	if err := untar.Wait(); err != nil {
		return fmt.Errorf("unpacking %s: %v\n%s", rev, err, stderr.Bytes())
	}
	return nil
}

// commandsIn lists the start-ups to measure among the binaries in bin.
func commandsIn(bin, suffix string) []*command {
	entries, _ := os.ReadDir(bin)
	var cmds []*command
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(bin, name)
		switch {
		case name == "toolport":
			cmds = append(cmds,
				&command{label: "toolport --help" + suffix, argv: []string{path, "--help"}},
				&command{label: "toolport version" + suffix, argv: []string{path, "version"}},
				&command{label: "toolport list" + suffix, argv: []string{path, "list"}})
		case strings.HasSuffix(name, "-tool"):
			cmds = append(cmds, &command{label: name + " --schema" + suffix, argv: []string{path, "--schema"}})
		}
	}
	slices.SortFunc(cmds, func(a, b *command) int { return cmp.Compare(a.label, b.label) })
	return cmds
}

// check runs c once and fails unless it succeeds with some output.
func check(c *command, env []string) error {
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%s: %v\n%s", c.label, err, stderr.Bytes())
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return fmt.Errorf("%s: printed nothing", c.label)
	}
	return nil
}

var collected = regexp.MustCompile(`(?m)^==\d+== Collected : (\d+)$`)

func instructions(c *command, env []string, out string) (int64, error) {
	args := append([]string{"--tool=callgrind", "--callgrind-out-file=" + out}, c.argv...)
	cmd := exec.Command("valgrind", args...)
	// Asynchronous preemption signals make callgrind's counts wander.
	cmd.Env = append(slices.Clone(env), "GODEBUG=asyncpreemptoff=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("callgrind %s: %v\n%s", c.label, err, stderr.Bytes())
	}
	m := collected.FindSubmatch(stderr.Bytes())
	if m == nil {
		return 0, fmt.Errorf("callgrind %s: no instruction count in its output\n%s", c.label, stderr.Bytes())
	}
	return strconv.ParseInt(string(m[1]), 10, 64)
}

func timeOnce(c *command, env []string) (cpu, wall time.Duration, rssKiB int64, err error) {
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.Env = env
	cmd.Stdout = io.Discard
	cmd.Stderr = io.Discard
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, 0, fmt.Errorf("%s: %v", c.label, err)
	}
	wall = time.Since(start)
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0, 0, errors.New("no rusage on this system")
	}
	cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return cpu, wall, ru.Maxrss, nil
}

func report(w io.Writer, cmds []*command, rounds int, load0, load1 string, callgrind bool) {
	hello := cmds[0]
	hCPU, hWall := median(hello.cpu), median(hello.wall)
	fmt.Fprintf(w, "%d interleaved rounds after one warm-up; load average %s at the start, %s at the end.\n", rounds, load0, load1)
	fmt.Fprintf(w, "CPU is user + system time of the process (all threads); median (min–max). × is the ratio to hello world's median.\n\n")
	fmt.Fprintln(w, "| command | instructions | × | CPU ms | × | wall ms | max RSS MB | within 10× (CPU) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, c := range cmds {
		instr, ix := "—", "—"
		if callgrind {
			instr = fmt.Sprintf("%.2f M", float64(c.instr)/1e6)
			ix = fmt.Sprintf("%.0f", float64(c.instr)/float64(hello.instr))
		}
		cpu := median(c.cpu)
		ratio := float64(cpu) / float64(hCPU)
		verdict := "yes"
		if ratio > target {
			verdict = "**no**"
		}
		if c == hello {
			verdict = ""
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s (%s–%s) | %.1f | %s (×%.1f) | %.1f | %s |\n",
			c.label, instr, ix,
			ms(cpu), ms(slices.Min(c.cpu)), ms(slices.Max(c.cpu)), ratio,
			ms(median(c.wall)), float64(median(c.wall))/float64(hWall),
			float64(medianInt(c.rss))/1024, verdict)
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func medianInt(xs []int64) int64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func slug(s string) string {
	return strings.Trim(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(s, "_"), "_")
}
