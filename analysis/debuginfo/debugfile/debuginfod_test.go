package debugfile

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestDebuginfodSilentServerCostsOneTimeout: with a server that accepts
// connections and never answers listed first, eight concurrent fetches and
// eight later ones take about one timeout in all; every fetch falls through
// to the working server, and results are cached in elfutils' layout.
func TestDebuginfodSilentServerCostsOneTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	}()
	var requests sync.Map
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Store(r.URL.Path, true)
		if !strings.HasSuffix(r.URL.Path, "/debuginfo") {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "debug file for %s", r.URL.Path)
	}))
	defer good.Close()

	timeout := time.Second
	cache := t.TempDir()
	d := &Debuginfod{URLs: []string{"http://" + l.Addr().String(), good.URL}, CacheDir: cache, Timeout: timeout}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = d.Fetch(context.Background(), []byte{0xab, byte(i)}, KindDebuginfo, "")
		}()
	}
	wg.Wait()
	for i := 8; i < 16; i++ {
		_, errs[i] = d.Fetch(context.Background(), []byte{0xab, byte(i)}, KindDebuginfo, "")
	}
	took := time.Since(start)
	for i, err := range errs {
		if err != nil {
			t.Errorf("fetch %d: %v", i, err)
		}
	}
	if took > timeout*3/2 {
		t.Errorf("16 fetches took %v with a silent server and a %v timeout", took, timeout)
	}
	if down := d.Down(); len(down) != 1 {
		t.Errorf("servers marked down: %v", down)
	}
	data, err := os.ReadFile(cache + "/ab05/debuginfo")
	if err != nil || string(data) != "debug file for /buildid/ab05/debuginfo" {
		t.Errorf("cache entry: %q, %v", data, err)
	}
	if _, err := d.Fetch(context.Background(), []byte{0xab, 0x05}, KindExecutable, ""); err != ErrNotFound {
		t.Errorf("a 404 everywhere: %v, want ErrNotFound", err)
	}
	// Cached: no request.
	requests.Delete("/buildid/ab05/debuginfo")
	if _, err := d.Fetch(context.Background(), []byte{0xab, 0x05}, KindDebuginfo, ""); err != nil {
		t.Fatal(err)
	}
	if _, asked := requests.Load("/buildid/ab05/debuginfo"); asked {
		t.Error("a cached artifact was fetched again")
	}
}

// TestDebuginfodSizeCap: an answer larger than MaxSize is refused and not cached.
func TestDebuginfodSizeCap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(make([]byte, 4096))
	}))
	defer srv.Close()
	cache := t.TempDir()
	d := &Debuginfod{URLs: []string{srv.URL}, CacheDir: cache, MaxSize: 1000}
	if _, err := d.Fetch(context.Background(), []byte{1, 2}, KindDebuginfo, ""); err == nil || !strings.Contains(err.Error(), "MAXSIZE") {
		t.Errorf("oversized answer: %v", err)
	}
	if _, err := os.Stat(cache + "/0102/debuginfo"); err == nil {
		t.Error("oversized answer was cached")
	}
}
