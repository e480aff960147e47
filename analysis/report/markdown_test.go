package report_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/classify"
	"github.com/faultline-dev/faultline/analysis/report"
)

var update = flag.Bool("update", false, "rewrite the golden reports in testdata/")

const corpus = "../../testdata/native"

// goldenCases are the corpus cores whose markdown reports are kept as
// golden files (testdata/NAME.md), with the library search dirs they need.
var goldenCases = map[string][]string{
	"null_inline": nil, "dlopen_plugin": {"bin"}, "threads64": nil, "reraise": nil, "static_dtor": nil,
	"uncaught_throw": nil, "stack_smash": nil, "recursion": nil, "assert_abort": nil, "double_free": nil,
	"noncanonical": nil, "sigfpe": nil, "demo": nil, "lock_deadlock": nil,
}

// coreHashes is the file recording which cores the goldens were made from.
// The corpus is regenerated when this machine's libraries change; a golden
// of another core is compared with the report after machineNeutral.
const coreHashes = "testdata/cores.sha256"

func hashFile(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func readHashes() map[string]string {
	out := map[string]string{}
	b, _ := os.ReadFile(coreHashes)
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			out[f[1]] = f[0]
		}
	}
	return out
}

// TestMarkdownGolden renders every corpus core's report and compares it
// with testdata/NAME.md.
func TestMarkdownGolden(t *testing.T) {
	hashes := readHashes()
	var names []string
	for n := range goldenCases {
		names = append(names, n)
	}
	sort.Strings(names)
	newHashes := map[string]string{}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			core := filepath.Join(corpus, "cores", name+".core.gz")
			if _, err := os.Stat(core); err != nil {
				t.Skipf("no core: %v", err)
			}
			h := hashFile(t, core)
			newHashes[name] = h
			opt := analysis.Options{Exe: filepath.Join(corpus, "bin", name)}
			for _, d := range goldenCases[name] {
				opt.SearchDirs = append(opt.SearchDirs, filepath.Join(corpus, d))
			}
			c, err := analysis.Open(core, opt)
			if err != nil {
				t.Fatal(err)
			}
			c.Dump.Path = "cores/" + name + ".core.gz"
			var buf bytes.Buffer
			if err := report.Markdown(&buf, c, ""); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", name+".md")
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			got := buf.String()
			if hashes[name] != h {
				// Regenerated for this machine's system libraries: the
				// program's part of the report must still be the golden's.
				got, want = machineNeutral(got, c), []byte(machineNeutral(string(want), c))
			}
			if got != string(want) {
				t.Errorf("report differs from %s (go test -update rewrites it):\n%s", golden, firstDiff(got, string(want)))
			}
			checkSections(t, buf.String())
		})
	}
	if *update {
		var b strings.Builder
		for _, n := range names {
			if h, ok := newHashes[n]; ok {
				b.WriteString(h + "  " + n + "\n")
			}
		}
		if err := os.WriteFile(coreHashes, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkSections: the report has the structure of the hand-written one.
func checkSections(t *testing.T, md string) {
	t.Helper()
	for _, s := range []string{"**Crash signal:**", "**Crashing thread:**", "**Crash context:**", "**Determinism:**",
		"### Crash call chain", "| Frame | Function | Source | Component |", "### Crashing instruction", "### Environment",
		"### Root cause hypothesis", "### Evidence", "### Upstream fix status", "### Recommended next steps"} {
		if !strings.Contains(md, s) {
			t.Errorf("report lacks %q", s)
		}
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\n got:  " + a + "\n want: " + b
		}
	}
	return ""
}

// TestMarkdownSet: the many-core report of the racy program states
// non-determinism, lists each signature group and recommends TSAN.
func TestMarkdownSet(t *testing.T) {
	cores, _ := filepath.Glob(filepath.Join(corpus, "cores", "racy_map.*.core.gz"))
	if len(cores) < 2 {
		t.Skip("racy_map cores missing (testdata/native/gen.sh --classify-only)")
	}
	var crashes []*analysis.Crash
	for _, core := range cores {
		c, err := analysis.Open(core, analysis.Options{Exe: filepath.Join(corpus, "bin", "racy_map")})
		if err != nil {
			t.Fatal(err)
		}
		crashes = append(crashes, c)
	}
	set := classify.GroupCrashes(crashes)
	var buf bytes.Buffer
	if err := report.MarkdownSet(&buf, set); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, s := range []string{"**Determinism:** non-deterministic", "likely-race", "-fsanitize=thread", "## Group 1:"} {
		if !strings.Contains(md, s) {
			t.Errorf("many-core report lacks %q", s)
		}
	}
	if n := strings.Count(md, "## Group "); n != len(set.Groups) {
		t.Errorf("%d group sections for %d groups", n, len(set.Groups))
	}
}
