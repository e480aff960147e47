package analysis_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/internal/fuzzbudget"
	"github.com/faultline-dev/faultline/internal/testgz"
)

// openBudget is what opening one fuzzed dump may cost: the whole pipeline
// runs (decompression, sniffing, notes, modules, unwinding, symbolizing
// against the host's real libraries, classification), so the base is
// larger than a single parser's; still a bound, and per input byte the same.
var openBudget = fuzzbudget.Budget{Alloc: 256 << 20, PerByte: 64, Time: 10 * time.Second}

// FuzzOpen runs the whole input pipeline, analysis.Open, on mutated dumps:
// ELF cores (plain, cut, gzip'd), and text logs. Whatever the bytes, Open
// returns an error or a model, within the budget, and never panics. The
// parsers have their own targets; this one covers what joins them (input
// sniffing and decompression, the formats table, link_map and module
// building in native, the unwinder's use of core memory, classify).
func FuzzOpen(f *testing.F) {
	demo, err := os.ReadFile(filepath.Join(corpus, "cores", "demo.core.gz"))
	if err != nil {
		f.Fatal(err)
	}
	plain, err := io.ReadAll(testgz.Open(f, filepath.Join(corpus, "cores", "demo.core.gz")))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(demo)
	f.Add(plain[:min(len(plain), 64<<10)])
	f.Add(gzipBytes(f, plain[:min(len(plain), 16<<10)]))
	for _, log := range []string{
		"logs/testdata/gpu/memcheck_scatter.txt",
		"logs/testdata/asan/heap-use-after-free.log",
	} {
		if b, err := os.ReadFile(log); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f (most recent call first):\n  File \"t.py\", line 3 in <module>\n"))
	exe, _ := filepath.Abs(filepath.Join(corpus, "bin", "demo"))
	opt := analysis.Options{Exe: exe, Offline: true, SearchDirs: []string{}}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "dump")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		fuzzbudget.Check(t, len(data), openBudget, func() {
			c, err := analysis.Open(path, opt)
			switch {
			case err != nil && err.Error() == "":
				t.Fatal("an error with no message")
			case err == nil && c == nil:
				t.Fatal("no model and no error")
			case err == nil && c.Schema != analysis.Schema:
				t.Fatalf("schema %q", c.Schema)
			}
		})
	})
}

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
