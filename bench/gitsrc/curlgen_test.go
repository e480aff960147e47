package gitsrcbench

import (
	"bufio"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// A generated history of curl's size and shape, so that the benchmark
// needs no network: curl had 39,490 commits on master when issue 22 was
// measured, 9,637 of them after curl-7_88_1, about 3,700 files of 4.7 KB
// on average, 5.4 files changed per commit, lib/easy.c changed by 158
// commits after the tag and easy_perform by 16. The generator writes a
// history with those figures through git fast-import: the tag
// curl-7_88_1, the default branch master, lib/easy.c with a real
// easy_perform that crashes on a NULL handle, and the rest of the tree
// as C-like text that changes as a project's does (lines replaced,
// inserted, removed), every commit message subject unique.

// curlShape are the generator's parameters.
type curlShape struct {
	Commits, After int // commits in all, and after the tag
	Files          int
	EasyEvery      int // lib/easy.c changes every EasyEvery commits
	PerformEvery   int // of which easy_perform every PerformEvery-th
}

var curlSize = curlShape{Commits: 40000, After: 10000, Files: 3700, EasyEvery: 63, PerformEvery: 10}

// genVersion changes whenever the generator's output changes.
const genVersion = 1

// curlRepo returns a bare repository with the generated history, built
// once under the bench cache directory.
func curlRepo(tb testing.TB, s curlShape) string {
	tb.Helper()
	repo := filepath.Join(benchDir(tb), fmt.Sprintf("curl-v%d-%d-%d-%d.git", genVersion, s.Commits, s.After, s.Files))
	if _, err := os.Stat(filepath.Join(repo, "refs", "tags", "curl-7_88_1")); err == nil {
		return repo
	}
	tmp := repo + ".tmp"
	os.RemoveAll(tmp)
	gitRun(tb, "", "init", "-q", "--bare", "-b", "master", tmp)
	cmd := exec.Command("nice", "-n", "10", "git", "fast-import", "--quiet")
	cmd.Env = append(os.Environ(), "GIT_DIR="+tmp)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(stdin, 1<<20)
	newCurlGen(s).write(w)
	w.Flush()
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		tb.Fatalf("git fast-import: %v", err)
	}
	// A pack as a server would keep it.
	gitRun(tb, "", "-C", tmp, "-c", "pack.threads=2", "repack", "-adq", "--window=10", "--depth=50")
	if err := os.Rename(tmp, repo); err != nil {
		tb.Fatal(err)
	}
	return repo
}

func benchDir(tb testing.TB) string {
	dir := os.Getenv("FAULTLINE_BENCH_DIR")
	if dir == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			tb.Fatal(err)
		}
		dir = filepath.Join(c, "faultline", "bench")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	return dir
}

func gitRun(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// curlGen generates the history.
type curlGen struct {
	s       curlShape
	r       *rand.Rand
	files   map[string][]string
	paths   []string
	perform int // easy_perform's edits so far
	easy    int // lib/easy.c's edits so far
}

// curlDirs are curl's directories; tests/data holds a third of the files.
var curlDirs = []string{"lib", "lib/vtls", "lib/vauth", "lib/vquic", "lib/vssh", "src", "include/curl", "docs",
	"docs/libcurl", "docs/libcurl/opts", "docs/cmdline-opts", "tests", "tests/data", "tests/data", "tests/data",
	"tests/libtest", "tests/unit", "tests/server", "m4", "scripts", "packages/OS400", "projects/Windows", "winbuild"}

func newCurlGen(s curlShape) *curlGen {
	g := &curlGen{s: s, r: rand.New(rand.NewSource(7488)), files: map[string][]string{}}
	for i := 0; len(g.paths) < s.Files-1; i++ {
		d := curlDirs[i%len(curlDirs)]
		p := fmt.Sprintf("%s/f%04d.c", d, i)
		g.files[p] = g.text(20 + g.r.Intn(180))
		g.paths = append(g.paths, p)
	}
	g.files["lib/easy.c"] = easyC(0, 0)
	g.paths = append(g.paths, "lib/easy.c")
	sort.Strings(g.paths)
	return g
}

// text is n lines of C-like text.
func (g *curlGen) text(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = g.line()
	}
	return out
}

func (g *curlGen) line() string {
	switch g.r.Intn(6) {
	case 0:
		return ""
	case 1:
		return "}"
	default:
		return fmt.Sprintf("  result = Curl_handler_%d(data, conn, %d); /* step %d */", g.r.Intn(400), g.r.Intn(1000), g.r.Intn(100000))
	}
}

// edit changes a file as a commit would.
func (g *curlGen) edit(p string) {
	f := g.files[p]
	for range 1 + g.r.Intn(4) {
		i := g.r.Intn(len(f) + 1)
		switch k := g.r.Intn(4); {
		case k == 0 && i < len(f):
			f = append(f[:i], f[i+1:]...)
		case k == 1:
			f = append(f[:i], append([]string{g.line()}, f[i:]...)...)
		case i < len(f):
			f[i] = g.line()
		}
	}
	g.files[p] = f
}

// easyC renders lib/easy.c: easy_perform (the crashing function, edited
// perform times) between other functions (edited other times).
func easyC(perform, other int) []string {
	var b strings.Builder
	b.WriteString("/* lib/easy.c: the easy interface. */\n#include <stddef.h>\n\nstruct Curl_easy { int magic; int result; };\n\n")
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&b, "int easy_helper%d(struct Curl_easy *data)\n{\n  return data ? data->result + %d : -1;\n}\n\n", i, i+other*(i%3))
	}
	fmt.Fprintf(&b, "/* easy_perform: revision %d */\nint easy_perform(struct Curl_easy *data)\n{\n", perform)
	fmt.Fprintf(&b, "  int rc = data->magic + %d;\n", perform)
	for i := 0; i < 8; i++ {
		fmt.Fprintf(&b, "  rc += easy_helper%d(data);\n", (i+perform)%12)
	}
	b.WriteString("  return rc;\n}\n\n")
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, "int easy_tail%d(struct Curl_easy *data)\n{\n  return data ? %d : 0;\n}\n\n", i, i*(1+other%7))
	}
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

// write writes the fast-import stream.
func (g *curlGen) write(w *bufio.Writer) {
	start := time.Date(2004, 1, 1, 0, 0, 0, 0, time.UTC)
	for c := 1; c <= g.s.Commits; c++ {
		var changed []string
		msg := ""
		if c == 1 {
			changed, msg = g.paths, "Initial import"
		} else {
			changed, msg = g.commitChanges(c)
		}
		when := start.Add(time.Duration(c) * 90 * time.Minute).Unix()
		fmt.Fprintf(w, "commit refs/heads/master\nmark :%d\nauthor Dev <dev@example.com> %d +0000\ncommitter Dev <dev@example.com> %d +0000\ndata %d\n%s\n",
			c, when, when, len(msg), msg)
		if c > 1 {
			fmt.Fprintf(w, "from :%d\n", c-1)
		}
		for _, p := range changed {
			body := strings.Join(g.files[p], "\n") + "\n"
			fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", p, len(body), body)
		}
		w.WriteString("\n")
		if c == g.s.Commits-g.s.After {
			fmt.Fprintf(w, "reset refs/tags/curl-7_88_1\nfrom :%d\n\n", c)
		}
	}
}

// commitChanges edits the files commit c changes and says why.
func (g *curlGen) commitChanges(c int) ([]string, string) {
	seen := map[string]bool{}
	var changed []string
	n := 1 + g.r.Intn(9)
	for len(changed) < n {
		p := g.paths[g.r.Intn(len(g.paths))]
		if p == "lib/easy.c" || seen[p] {
			continue
		}
		seen[p] = true
		g.edit(p)
		changed = append(changed, p)
	}
	msg := fmt.Sprintf("%s: adjust step handling (%d)", strings.Split(changed[0], "/")[0], c)
	if c%g.s.EasyEvery == 0 {
		g.easy++
		if g.easy%g.s.PerformEvery == 0 {
			g.perform++
			msg = fmt.Sprintf("easy: fix a crash in easy_perform with a NULL handle (%d)", c)
		} else {
			msg = fmt.Sprintf("easy: tidy the helpers (%d)", c)
		}
		g.files["lib/easy.c"] = easyC(g.perform, g.easy)
		changed = append(changed, "lib/easy.c")
	}
	sort.Strings(changed)
	return changed, msg
}
