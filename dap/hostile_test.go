package dap_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/internal/boundtest"
	"github.com/faultline-dev/faultline/internal/crashbuild"
)

func TestMain(m *testing.M) { os.Exit(boundtest.Main(m)) }

// Hostile launches and requests (issue 24 items 10, 12) through the built
// `faultline dap`, its stdin written as a client would.

// session frames DAP requests: {command, arguments}.
func session(reqs ...[2]any) []byte {
	var b strings.Builder
	for i, r := range reqs {
		msg := map[string]any{"seq": i + 1, "type": "request", "command": r[0]}
		if r[1] != nil {
			msg["arguments"] = r[1]
		}
		body, _ := json.Marshal(msg)
		fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
	}
	return []byte(b.String())
}

type dapResponse struct {
	Type, Command, Message string
	Success                bool
	RequestSeq             int `json:"request_seq"`
	Body                   json.RawMessage
}

// responses reads the responses of the adapter's output, by request seq.
func responses(t *testing.T, out string) map[int]dapResponse {
	t.Helper()
	got := map[int]dapResponse{}
	br := bufio.NewReader(strings.NewReader(out))
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return got
		}
		n, ok := strings.CutPrefix(strings.TrimSpace(line), "Content-Length: ")
		if !ok {
			continue
		}
		size, _ := strconv.Atoi(n)
		br.ReadString('\n')
		body := make([]byte, size)
		if _, err := io.ReadFull(br, body); err != nil {
			t.Fatalf("short frame: %v", err)
		}
		var r dapResponse
		if json.Unmarshal(body, &r) == nil && r.Type == "response" {
			got[r.RequestSeq] = r
		}
	}
}

// TestLaunchNonRegularRefused: launch on a FIFO nobody writes (which
// hung the adapter), on /dev/stdin (its own protocol stream), on /dev/tty
// and on a directory gets an error answer, and the adapter keeps
// answering on the same stream.
func TestLaunchNonRegularRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "core")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, kind string }{{fifo, "a FIFO"}, {"/dev/stdin", "a FIFO"}, {"/dev/zero", "a character device"}, {t.TempDir(), "a directory"}} {
		in := session([2]any{"initialize", map[string]any{"adapterID": "faultline"}},
			[2]any{"launch", map[string]any{"coreFile": c.path}}, [2]any{"threads", nil}, [2]any{"disconnect", nil})
		r := boundtest.Run(t, boundtest.Cmd{Args: []string{"dap"}, Stdin: in, StdinOpen: true, Limits: boundtest.Limits{Wall: 20 * time.Second}})
		got := responses(t, r.Stdout)
		if r.Killed != "" || r.Exit != 0 || got[2].Success || !strings.Contains(got[2].Message, "is "+c.kind+", not a regular file") {
			t.Errorf("launch on %s: want a refusal naming %s and a clean exit; %v, launch %+v\n%s", c.path, c.kind, r, got[2], r.Stderr)
		}
		if _, ok := got[3]; !ok {
			t.Errorf("launch on %s: no answer to the next request (threads)", c.path)
		}
	}
}

// stallingDebuginfod accepts connections and never answers.
func stallingDebuginfod(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	return "http://" + l.Addr().String()
}

// TestEOFMidLaunchExits: the client closes stdin while the launch waits
// on a debuginfod server that never answers (a stripped program: its
// debug file is asked for); the adapter exits at once instead of when the
// launch ends.
func TestEOFMidLaunchExits(t *testing.T) {
	p := crashbuild.Build(t, t.TempDir())
	stripped := filepath.Join(t.TempDir(), "crash")
	if out, err := exec.Command("strip", "--strip-debug", "-o", stripped, p.Exe).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	in := session([2]any{"initialize", map[string]any{"adapterID": "faultline"}},
		[2]any{"launch", map[string]any{"coreFile": p.Core, "program": stripped}})
	env := []string{"DEBUGINFOD_URLS=" + stallingDebuginfod(t), "DEBUGINFOD_TIMEOUT=120", "DEBUGINFOD_CACHE_PATH=" + t.TempDir()}
	r := boundtest.Run(t, boundtest.Cmd{Args: []string{"dap"}, Stdin: in, Env: env, Limits: boundtest.Limits{Wall: 60 * time.Second}})
	if r.Killed != "" || r.Exit != 0 || r.Wall > 10*time.Second {
		t.Errorf("bound: the adapter exits within 10 s of stdin's end, mid-launch; got %v\n%s", r, r.Stderr)
	}
}

// TestHostileRequestArguments: stackTrace with levels and startFrame near
// 2^63 (start+levels overflowed) answers with the frames there are, and a
// failed evaluate names the expression as written ("b->next->next", not
// "bnextnext").
func TestHostileRequestArguments(t *testing.T) {
	core, err := filepath.Abs(filepath.Join("..", "testdata", "native", "cores", "null_inline.core.gz"))
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := filepath.Abs(filepath.Join("..", "testdata", "native", "bin", "null_inline"))
	model, err := analysis.Open(core, analysis.Options{Exe: exe, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	tid := model.CrashingThreadID
	in := session([2]any{"initialize", map[string]any{"adapterID": "faultline"}},
		[2]any{"launch", map[string]any{"coreFile": core, "program": exe, "offline": true}},
		[2]any{"configurationDone", nil},
		[2]any{"stackTrace", map[string]any{"threadId": tid, "startFrame": 1, "levels": math.MaxInt64}},
		[2]any{"stackTrace", map[string]any{"threadId": tid, "startFrame": math.MaxInt64, "levels": math.MaxInt64}},
		[2]any{"evaluate", map[string]any{"expression": "b->next->next->value", "frameId": 5, "context": "watch"}},
		[2]any{"evaluate", map[string]any{"expression": "a.next.nosuch", "frameId": 5, "context": "watch"}},
		[2]any{"disconnect", nil})
	r := boundtest.Run(t, boundtest.Cmd{Args: []string{"dap"}, Stdin: in, StdinOpen: true, Limits: boundtest.Limits{Wall: 60 * time.Second}})
	got := responses(t, r.Stdout)
	var st struct{ StackFrames []json.RawMessage }
	json.Unmarshal(got[4].Body, &st)
	if !got[4].Success || len(st.StackFrames) != 4 {
		t.Errorf("stackTrace startFrame 1 levels 2^63-1: want the 4 frames after the first; %+v", got[4])
	}
	json.Unmarshal(got[5].Body, &st)
	if !got[5].Success || len(st.StackFrames) != 0 {
		t.Errorf("stackTrace startFrame 2^63-1: want no frames; %+v", got[5])
	}
	if m := got[6].Message; got[6].Success || !strings.Contains(m, "b->next->next has no member or element value") {
		t.Errorf("evaluate b->next->next->value: want the expression named as written; %+v", got[6])
	}
	if m := got[7].Message; got[7].Success || !strings.Contains(m, "a.next has no member or element nosuch") {
		t.Errorf("evaluate a.next.nosuch: %+v", got[7])
	}
	if r.Exit != 0 || r.Killed != "" {
		t.Errorf("%v\n%s", r, r.Stderr)
	}
}

// TestLaunchCoreNamingStdin (issue 24 items 1, 2): a core whose mapped
// files name /dev/stdin (the adapter's own protocol stream), a FIFO,
// /dev/zero and a directory, their first pages missing from the core:
// the launch is answered, and the requests after it too.
func TestLaunchCoreNamingStdin(t *testing.T) {
	core := boundtest.HostilePathsCore(t, t.TempDir())
	in := session([2]any{"initialize", map[string]any{"adapterID": "faultline"}},
		[2]any{"launch", map[string]any{"coreFile": core, "offline": true}}, [2]any{"threads", nil}, [2]any{"disconnect", nil})
	r := boundtest.Run(t, boundtest.Cmd{Args: []string{"dap"}, Stdin: in, StdinOpen: true, Limits: boundtest.Limits{Wall: 30 * time.Second}})
	got := responses(t, r.Stdout)
	if r.Killed != "" || r.Exit != 0 || !got[2].Success || !got[3].Success || !got[4].Success {
		t.Errorf("want launch, threads and disconnect answered and a clean exit; %v, launch %+v threads %+v\n%s", r, got[2], got[3], r.Stderr)
	}
}
