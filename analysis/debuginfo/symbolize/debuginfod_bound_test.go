package symbolize

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/boundtest"
)

// debuginfod limits (issue 18 item 7): hostile servers on 127.0.0.1
// (httptest) answer the real binary's request for the stripped demo
// program's debug file, given with --debuginfod URL and the elfutils
// environment variables.

func analyzeWithDebuginfod(t *testing.T, h http.Handler, env ...string) (boundtest.Result, string) {
	t.Helper()
	srv := httptest.NewServer(h) // 127.0.0.1
	t.Cleanup(srv.Close)
	exe, _ := linkedDemo(t, "demo.debug")
	cache := t.TempDir()
	r := boundtest.Run(t, boundtest.Cmd{Args: []string{"analyze", "--json", "--debuginfod", srv.URL, "--debuginfod-cache", cache,
		"--exe", exe, "../../../testdata/native/cores/demo.core.gz"}, Env: env,
		Limits: boundtest.Limits{Wall: 40 * time.Second, RSSKiB: 1 << 20}})
	if r.Killed != "" || r.Exit != 0 {
		t.Fatalf("%v\n%s", r, r.Stderr)
	}
	var msgs []string
	for _, p := range boundtest.Crash(t, r).Problems {
		msgs = append(msgs, p.Message)
	}
	if n := boundtest.DirBytes(cache); n != 0 {
		t.Errorf("%d bytes left in the debuginfod cache", n)
	}
	return r, strings.Join(msgs, "\n")
}

// TestBoundDebuginfodDrip: a server that drips one byte every 2 s (under
// the 10 s stall timeout) is cut off by DEBUGINFOD_MAXTIME.
func TestBoundDebuginfodDrip(t *testing.T) {
	drip := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		for {
			if _, err := w.Write([]byte{0x7f}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(2 * time.Second):
			}
		}
	})
	r, problems := analyzeWithDebuginfod(t, drip, "DEBUGINFOD_MAXTIME=3")
	if !strings.Contains(problems, "DEBUGINFOD_MAXTIME") {
		t.Errorf("no problem names DEBUGINFOD_MAXTIME:\n%s", problems)
	}
	if r.Wall > 20*time.Second {
		t.Errorf("bound: wall <= 12 s with DEBUGINFOD_MAXTIME=3; got %v", r)
	}
}

// TestBoundDebuginfodMaxSize: an answer without Content-Length streaming
// 256 MiB stops at DEBUGINFOD_MAXSIZE (1 MiB), given with --debuginfod.
func TestBoundDebuginfodMaxSize(t *testing.T) {
	var sent atomic.Int64
	flood := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK) // chunked: no Content-Length
		buf := make([]byte, 64<<10)
		for range 4096 {
			n, err := w.Write(buf)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	r, problems := analyzeWithDebuginfod(t, flood, "DEBUGINFOD_MAXSIZE=1048576")
	if !strings.Contains(problems, "DEBUGINFOD_MAXSIZE") {
		t.Errorf("no problem names DEBUGINFOD_MAXSIZE:\n%s", problems)
	}
	if s := sent.Load(); s > 16<<20 {
		t.Errorf("bound: the client stops reading near 1 MiB; the server sent %d bytes", s)
	}
	t.Logf("server sent %d bytes before the client stopped; %v", sent.Load(), r)
}

// TestBoundDebuginfodTimeoutFlag: DEBUGINFOD_TIMEOUT applies with
// --debuginfod URL too (the server answers after 6 s; the timeout is 1 s).
func TestBoundDebuginfodTimeoutFlag(t *testing.T) {
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(6 * time.Second):
			http.NotFound(w, r)
		}
	})
	r, problems := analyzeWithDebuginfod(t, slow, "DEBUGINFOD_TIMEOUT=1")
	if !strings.Contains(problems, "no answer within 1s") {
		t.Errorf("no problem says the 1 s timeout passed:\n%s", problems)
	}
	if r.Wall > 5*time.Second {
		t.Errorf("bound: wall <= 5 s with DEBUGINFOD_TIMEOUT=1; got %v", r)
	}
}
