package gitsrc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/gitsrc/gitsrctest"
)

// TestVerifyZlibWrongTag (issue 22 item 4, on zlib's real-release
// history): libz.so.1.2.11 (gcc -g -O2: no DWARF 5 MD5s) crashed in
// inflate(). With no configuration the v1.2.11 checkout verifies. A rule
// naming v1.2.13, or 1.2.13 without the "v", resolves to v1.2.13 and is
// caught: every file is there and every line is inside its file, but the
// binary declares inflate() (DW_AT_decl_line) on a line of inflate.c
// that, at v1.2.13, does not declare it. The problem says so and the
// review says it is unverified.
func TestVerifyZlibWrongTag(t *testing.T) {
	z, err := gitsrctest.Zlib()
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := gitsrctest.StartDaemon(filepath.Join(z.Dir, "srv"))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	gitconfig := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(gitconfig, []byte("[url \""+url+"\"]\n\tinsteadOf = https://github.com/madler/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", gitconfig)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	c, err := analysis.Open(z.Core, analysis.Options{Exe: z.Exe, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	resolve := func(rules string) *Result {
		var cfg *Config
		if rules != "" {
			if cfg, err = ParseConfig([]byte(rules)); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		res, err := Resolve(ctx, c, Options{Config: cfg, CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	right := componentNamed(t, resolve(""), "zlib")
	if v := right.Verification; right.Revision != "v1.2.11" || v == nil || !v.Verified || v.Functions == 0 {
		t.Fatalf("no config: %s, verification %+v; want v1.2.11 verified by its functions' declarations", right.Revision, v)
	}
	for _, rev := range []string{"v1.2.13", "1.2.13"} {
		res := resolve(`{"components": [{"module": "libz", "name": "zlib", "repo": "https://github.com/madler/zlib", "revision": "` + rev + `"}]}`)
		comp := componentNamed(t, res, "zlib")
		v := comp.Verification
		if comp.Revision != "v1.2.13" || v == nil || v.Verified || !strings.Contains(strings.Join(v.Mismatches, ";"), "inflate") {
			t.Errorf("rule %s: %s, verification %+v; want v1.2.13 caught at inflate()", rev, comp.Revision, v)
		}
		if !problemFor(res, z.Lib, "does not match the binary") {
			t.Errorf("rule %s: problems %+v", rev, res.Problems)
		}
		for _, u := range res.Upstream {
			if !u.Unverified {
				t.Errorf("rule %s: the review of %s does not say it is unverified", rev, u.Path)
			}
		}
	}
}
