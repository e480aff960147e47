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
	return analyzeWithDebuginfodArgs(t, h, nil, env...)
}

// analyzeWithDebuginfodArgs is analyzeWithDebuginfod with more analyze
// flags.
func analyzeWithDebuginfodArgs(t *testing.T, h http.Handler, flags []string, env ...string) (boundtest.Result, string) {
	t.Helper()
	srv := httptest.NewServer(h) // 127.0.0.1
	t.Cleanup(srv.Close)
	exe, _ := linkedDemo(t, "demo.debug")
	cache := t.TempDir()
	args := append([]string{"analyze", "--json", "--debuginfod", srv.URL, "--debuginfod-cache", cache}, flags...)
	r := boundtest.Run(t, boundtest.Cmd{Args: append(args, "--exe", exe, "../../../testdata/native/cores/demo.core.gz"), Env: env,
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

// dripping sends one byte every period until the client hangs up.
func dripping(period time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		for {
			if _, err := w.Write([]byte{0x7f}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(period):
			}
		}
	})
}

// streaming sends 64 KiB every 250 ms (256 KiB a second, above elfutils'
// 100 KiB a second) and never ends.
func streaming() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		buf := make([]byte, 64<<10)
		for {
			if _, err := w.Write(buf); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	})
}

// TestBoundDebuginfodDrip (issue 24 item 11): a server that drips one
// byte a second is cut off after --debuginfod-timeout 2s, as elfutils cuts
// off a server that has not sent 100 KiB within DEBUGINFOD_TIMEOUT
// seconds. Each byte used to re-arm a stall timer, so only
// DEBUGINFOD_MAXTIME (5 minutes) ended the request.
func TestBoundDebuginfodDrip(t *testing.T) {
	r, problems := analyzeWithDebuginfodArgs(t, dripping(time.Second), []string{"--debuginfod-timeout", "2s"})
	if !strings.Contains(problems, "less than 100 KiB a second for 2s") {
		t.Errorf("no problem says the server sent less than 100 KiB a second for 2 s:\n%s", problems)
	}
	if r.Wall > 12*time.Second {
		t.Errorf("bound: wall <= 12 s with --debuginfod-timeout 2s; got %v", r)
	}
}

// TestBoundDebuginfodMaxTime: a server fast enough for the timeout rule
// that never ends its answer is cut off by DEBUGINFOD_MAXTIME.
func TestBoundDebuginfodMaxTime(t *testing.T) {
	r, problems := analyzeWithDebuginfod(t, streaming(), "DEBUGINFOD_MAXTIME=3", "DEBUGINFOD_TIMEOUT=2")
	if !strings.Contains(problems, "DEBUGINFOD_MAXTIME") {
		t.Errorf("no problem names DEBUGINFOD_MAXTIME:\n%s", problems)
	}
	if r.Wall > 15*time.Second {
		t.Errorf("bound: wall <= 15 s with DEBUGINFOD_MAXTIME=3; got %v", r)
	}
}

// TestBoundDebuginfodTotal: the same server with a long DEBUGINFOD_MAXTIME
// is cut off by the dump's total debuginfod time.
func TestBoundDebuginfodTotal(t *testing.T) {
	r, problems := analyzeWithDebuginfod(t, streaming(), "DEBUGINFOD_MAXTIME=120", "FAULTLINE_DEBUGINFOD_TOTAL=3")
	if !strings.Contains(problems, "FAULTLINE_DEBUGINFOD_TOTAL") {
		t.Errorf("no problem names FAULTLINE_DEBUGINFOD_TOTAL:\n%s", problems)
	}
	if r.Wall > 15*time.Second {
		t.Errorf("bound: wall <= 15 s with FAULTLINE_DEBUGINFOD_TOTAL=3; got %v", r)
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
