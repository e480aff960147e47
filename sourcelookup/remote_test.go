package sourcelookup

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/faultline-dev/faultline/analysis/debuginfo/debugfile"
	"github.com/faultline-dev/faultline/analysis/model"
)

// TestFetch: only files no local step finds are asked for, by the
// build-id of their frame's module and their comp_dir path; what comes
// back is cached read-only, resolved, and marked as fetched. A second
// Fetch (another crash) forgets the first one's files. The real server
// (Debian's debuginfod) is exercised by the server's and the adapter's
// tests.
func TestFetch(t *testing.T) {
	build := tree(t, "src/here.c")
	var (
		mu    sync.Mutex
		asked []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		asked = append(asked, req.URL.Path)
		mu.Unlock()
		if strings.HasSuffix(req.URL.Path, "/src/gone.c") {
			w.Write([]byte("int gone;\n"))
			return
		}
		http.NotFound(w, req)
	}))
	defer srv.Close()
	cache := t.TempDir()
	r := New(Config{Remote: &debugfile.Debuginfod{URLs: []string{srv.URL}, CacheDir: cache, CacheMiss: -1}})
	frames := []model.Frame{
		{Module: "/bin/prog", File: "src/gone.c", CompDir: build},
		{Module: "/bin/prog", File: "src/here.c", CompDir: build},
		{Module: "/bin/prog", File: "src/nowhere.c", CompDir: build},
		{Module: "/lib/nobuildid.so", File: "x.c", CompDir: build},
		{Module: "/bin/prog", File: "rel.c"},
	}
	crash := &model.Crash{CrashingThreadID: 7,
		Threads: []model.Thread{{ID: 7, Frames: frames}},
		Modules: []model.Module{{Path: "/bin/prog", BuildID: "abcd"}, {Path: "/lib/nobuildid.so"}}}
	n, err := r.Fetch(context.Background(), crash, "")
	if n != 1 || err != nil {
		t.Fatalf("Fetch = %d, %v; want 1 file", n, err)
	}
	sort.Strings(asked)
	want := []string{"/buildid/abcd/source" + build + "/src/gone.c", "/buildid/abcd/source" + build + "/src/nowhere.c"}
	if strings.Join(asked, " ") != strings.Join(want, " ") {
		t.Errorf("asked %q, want %q", asked, want)
	}
	got := r.Resolve(&frames[0], "")
	if wantPath := filepath.Join(cache, "abcd", "source"+strings.ReplaceAll(build+"/src/gone.c", "/", "#")); got != wantPath {
		t.Fatalf("Resolve(gone.c) = %q, want the cached copy %q", got, wantPath)
	}
	if b, _ := os.ReadFile(got); string(b) != "int gone;\n" {
		t.Errorf("fetched content %q", b)
	}
	if fi, err := os.Stat(got); err != nil || fi.Mode().Perm()&0o222 != 0 {
		t.Errorf("fetched file mode %v, %v: want read-only", fi.Mode(), err)
	}
	if from := r.FetchedFrom(got); from != "debuginfod "+srv.URL {
		t.Errorf("FetchedFrom = %q", from)
	}
	if p := r.Resolve(&frames[1], ""); r.FetchedFrom(p) != "" || p != filepath.Join(build, "src/here.c") {
		t.Errorf("local file resolved to %q (fetched from %q)", p, r.FetchedFrom(p))
	}
	// The same frame under another module (another crash) is not that copy.
	if p := r.Resolve(&model.Frame{Module: "/bin/other", File: "src/gone.c", CompDir: build}, ""); p != "" {
		t.Errorf("another module's gone.c resolved to %q", p)
	}
	// A resolver for new settings keeps the fetched files when it may
	// fetch too (the same crash stays open), not when offline.
	online, offline := New(Config{Remote: r.remote}), New(Config{})
	online.KeepFetched(r)
	offline.KeepFetched(r)
	if p := online.Resolve(&frames[0], ""); p != got {
		t.Errorf("KeepFetched: the new resolver resolves %q, want %s", p, got)
	}
	if p := offline.Resolve(&frames[0], ""); p != "" {
		t.Errorf("KeepFetched into an offline resolver: %q", p)
	}
	if _, err := r.Fetch(context.Background(), &model.Crash{}, ""); err != nil {
		t.Fatal(err)
	}
	if p := r.Resolve(&frames[0], ""); p != "" || r.FetchedFrom(got) != "" {
		t.Errorf("after a Fetch for another crash: %q, from %q", p, r.FetchedFrom(got))
	}
}

// TestFetchCap: a crash with more missing files than maxFetches asks for
// maxFetches, the crashing thread's first.
func TestFetchCap(t *testing.T) {
	var (
		mu    sync.Mutex
		asked = map[string]bool{}
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		asked[filepath.Base(req.URL.Path)] = true
		mu.Unlock()
		http.NotFound(w, req)
	}))
	defer srv.Close()
	var other, crashing []model.Frame
	for i := 0; i < maxFetches; i++ {
		other = append(other, model.Frame{Module: "/p", File: "/gone/other" + string(rune('a'+i%26)) + strings.Repeat("x", i/26) + ".c"})
		crashing = append(crashing, model.Frame{Module: "/p", File: "/gone/crash" + strings.Repeat("y", i) + ".c"})
	}
	crash := &model.Crash{CrashingThreadID: 2, Modules: []model.Module{{Path: "/p", BuildID: "01"}},
		Threads: []model.Thread{{ID: 1, Frames: other}, {ID: 2, Frames: crashing[:10]}}}
	r := New(Config{Remote: &debugfile.Debuginfod{URLs: []string{srv.URL}, CacheDir: t.TempDir(), CacheMiss: -1}})
	if n, err := r.Fetch(context.Background(), crash, ""); n != 0 || err != nil {
		t.Fatalf("Fetch = %d, %v", n, err)
	}
	crashAsked := 0
	for name := range asked {
		if strings.HasPrefix(name, "crash") {
			crashAsked++
		}
	}
	if len(asked) != maxFetches || crashAsked != 10 {
		t.Errorf("asked %d files (%d of the crashing thread), want %d with all 10", len(asked), crashAsked, maxFetches)
	}
}

// TestFetchByteBudget: once the fetched files add up to maxFetchBytes, no
// more downloads start (those already running finish).
func TestFetchByteBudget(t *testing.T) {
	defer func(old int64) { maxFetchBytes = old }(maxFetchBytes)
	maxFetchBytes = 3000
	body := strings.Repeat("x", 1000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Write([]byte(body))
	}))
	defer srv.Close()
	var frames []model.Frame
	for i := 0; i < 40; i++ {
		frames = append(frames, model.Frame{Module: "/p", File: "/gone/f" + strings.Repeat("y", i) + ".c"})
	}
	crash := &model.Crash{CrashingThreadID: 1, Modules: []model.Module{{Path: "/p", BuildID: "02"}},
		Threads: []model.Thread{{ID: 1, Frames: frames}}}
	r := New(Config{Remote: &debugfile.Debuginfod{URLs: []string{srv.URL}, CacheDir: t.TempDir()}})
	n, err := r.Fetch(context.Background(), crash, "")
	if err != nil {
		t.Fatal(err)
	}
	if n < 3 || n > 3+fetchParallel {
		t.Errorf("fetched %d files of 1000 bytes with a 3000-byte budget, want 3 to %d", n, 3+fetchParallel)
	}
}
