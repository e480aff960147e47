package analysis_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/report"
)

// TestModulePoolSameModels opens every corpus core twice through one
// module pool (so each core after the first reuses the libc, libstdc++
// and ld.so the earlier ones opened, and the second round reuses
// everything) and holds each model to the one a fresh open gives, byte
// for byte in its JSON.
func TestModulePoolSameModels(t *testing.T) {
	cases := loadCorpus(t)
	pool := analysis.NewModulePool()
	defer pool.Close()
	fresh := map[string][]byte{}
	files := 0 // module files the cores name, over the first round
	for round := range 2 {
		for _, c := range cases {
			opt := analysis.Options{Exe: filepath.Join(corpus, c.Binary), Offline: true}
			for _, d := range c.SearchDirs {
				opt.SearchDirs = append(opt.SearchDirs, filepath.Join(corpus, d))
			}
			core := filepath.Join(corpus, c.Core)
			if round == 0 {
				want, err := analysis.Open(core, opt)
				if err != nil {
					t.Fatalf("%s: %v", c.Name, err)
				}
				fresh[c.Name] = modelJSON(t, want)
				for _, m := range want.Modules {
					if m.Path != "[vdso]" {
						files++
					}
				}
			}
			opt.Pool = pool
			got, err := analysis.Open(core, opt)
			if err != nil {
				t.Fatalf("%s (pooled, round %d): %v", c.Name, round, err)
			}
			if b := modelJSON(t, got); !bytes.Equal(b, fresh[c.Name]) {
				t.Errorf("%s: round %d through the pool differs from a fresh open:\n%s", c.Name, round, lineDiff(b, fresh[c.Name]))
			}
		}
		// Every core maps libc and ld.so: the pool holds each once.
		if n := pool.Len(); n == 0 || n*2 > files {
			t.Fatalf("round %d: the pool holds %d binaries for %d module mappings: nothing was shared", round, n, files)
		}
		t.Logf("round %d: %d binaries pooled for %d module mappings", round, pool.Len(), files)
	}
}

func modelJSON(t *testing.T, c *analysis.Crash) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := report.JSON(&buf, c); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func lineDiff(got, want []byte) string {
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b []byte
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if !bytes.Equal(a, b) {
			return "got:  " + string(a) + "\nwant: " + string(b)
		}
	}
	return ""
}
