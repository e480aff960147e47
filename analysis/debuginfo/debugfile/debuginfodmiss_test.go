package debugfile

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// TestDebuginfodMissCache: a build-id no server has is asked for once and
// then answered from the cache's empty file until it is older than
// cache_miss_s, as elfutils' client does; with cache_miss_s 0 every fetch
// asks again.
func TestDebuginfodMissCache(t *testing.T) {
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.NotFound(w, r)
	}))
	defer srv.Close()
	cache := t.TempDir()
	d := &Debuginfod{URLs: []string{srv.URL}, CacheDir: cache}
	id := []byte{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4}
	for i := 0; i < 3; i++ {
		if _, err := d.Fetch(context.Background(), id, KindDebuginfo, ""); !errors.Is(err, ErrNotFound) {
			t.Fatalf("fetch %d: %v", i, err)
		}
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("server asked %d times for one missing build-id, want 1", n)
	}
	st, err := os.Stat(filepath.Join(cache, "deadbeef01020304", "debuginfo"))
	if err != nil || st.Size() != 0 {
		t.Fatalf("miss not recorded as an empty file: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(cache, "cache_miss_s")); err != nil || string(b) != "600\n" {
		t.Errorf("cache_miss_s = %q, %v", b, err)
	}
	// An old miss is asked again.
	old := time.Now().Add(-601 * time.Second)
	os.Chtimes(filepath.Join(cache, "deadbeef01020304", "debuginfo"), old, old)
	d.Fetch(context.Background(), id, KindDebuginfo, "")
	if n := asked.Load(); n != 2 {
		t.Errorf("after the miss expired: asked %d times, want 2", n)
	}
	// cache_miss_s 0: misses are not remembered.
	os.WriteFile(filepath.Join(cache, "cache_miss_s"), []byte("0\n"), 0o644)
	d.Fetch(context.Background(), id, KindDebuginfo, "")
	d.Fetch(context.Background(), id, KindDebuginfo, "")
	if n := asked.Load(); n != 4 {
		t.Errorf("with cache_miss_s 0: asked %d times, want 4", n)
	}
}

// TestDebuginfodHeadersAndMaxTime: DEBUGINFOD_HEADERS_FILE's headers go
// with every request, and DEBUGINFOD_MAXTIME ends a download that keeps
// trickling (each pause shorter than DEBUGINFOD_TIMEOUT) after that many
// seconds.
func TestDebuginfodHeadersAndMaxTime(t *testing.T) {
	var gotAuth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth.Store(r.Header.Get("Authorization") + "|" + r.Header.Get("X-Project"))
		w.Header().Set("Content-Length", "1000")
		for i := 0; i < 1000; i++ {
			if _, err := w.Write([]byte{'x'}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-time.After(100 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
	}))
	defer srv.Close()
	headers := filepath.Join(t.TempDir(), "headers")
	os.WriteFile(headers, []byte("Authorization: Bearer abc\nnot a header line\nX-Project:  faultline \n"), 0o644)
	t.Setenv("DEBUGINFOD_URLS", srv.URL)
	t.Setenv("DEBUGINFOD_HEADERS_FILE", headers)
	t.Setenv("DEBUGINFOD_MAXTIME", "1")
	t.Setenv("DEBUGINFOD_TIMEOUT", "5")
	t.Setenv("DEBUGINFOD_CACHE_PATH", t.TempDir())
	d := NewDebuginfodFromEnv()
	start := time.Now()
	_, err := d.Fetch(context.Background(), []byte{1, 2, 3, 4, 5, 6, 7, 8}, KindDebuginfo, "")
	took := time.Since(start)
	if err == nil {
		t.Fatal("a 100 s download finished within DEBUGINFOD_MAXTIME=1")
	}
	if took > 4*time.Second {
		t.Errorf("download ran %v with DEBUGINFOD_MAXTIME=1", took)
	}
	if got, _ := gotAuth.Load().(string); got != "Bearer abc|faultline" {
		t.Errorf("headers sent: %q", got)
	}
}
