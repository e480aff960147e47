package server_test

import (
	"encoding/json"
	"errors"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/faultline-dev/faultline/server"
)

// threadsPage asks faultline/threads for params and returns the result and
// its size on the wire.
func (e *Env) threadsPage(params any) (server.ThreadsResult, int, error) {
	e.t.Helper()
	var res server.ThreadsResult
	raw, err := e.Server.Request(e.ctx, server.MethodThreads, params)
	if err != nil {
		return res, 0, err
	}
	b, _ := json.Marshal(raw)
	return res, len(b), json.Unmarshal(b, &res)
}

// TestThreadsPaging opens the recursion core (descend() overflowed the
// stack: about 30,800 frames) and pages its frames as DAP's stackTrace
// does: the default answer, which editors re-request on every diagnostics
// update, holds 64 frames and says how many there are (it was 7 MB with
// every frame); pages from startFrame follow; levels is capped.
func TestThreadsPaging(t *testing.T) {
	e := newEnv(t, map[string]any{}, server.Options{})
	e.OpenDump("recursion")

	def, size, err := e.threadsPage(nil)
	if err != nil {
		t.Fatal(err)
	}
	th := def.Threads[0]
	if len(def.Threads) != 1 || th.TotalFrames < 30000 || len(th.Frames) != server.DefaultFrameLevels || th.StartFrame != 0 {
		t.Fatalf("default page: %d threads, %d of %d frames from %d", len(def.Threads), len(th.Frames), th.TotalFrames, th.StartFrame)
	}
	if size > 64<<10 {
		t.Errorf("default faultline/threads answer is %d bytes, want under 64 KiB", size)
	}
	if !th.Frames[0].Culprit && !th.Frames[1].Culprit {
		t.Errorf("the culprit is not in the first frames: %+v", th.Frames[:2])
	}

	start := th.TotalFrames - 10
	page, _, err := e.threadsPage(map[string]int{"thread": th.ID, "startFrame": start, "levels": 100})
	if err != nil {
		t.Fatal(err)
	}
	p := page.Threads[0]
	if len(page.Threads) != 1 || p.StartFrame != start || len(p.Frames) != 10 || p.Frames[0].Index != start ||
		p.Frames[9].Function != "main" || p.Stack != th.Stack {
		t.Errorf("last page: %d frames from %d, last %+v, stack %s vs %s", len(p.Frames), p.StartFrame, p.Frames[len(p.Frames)-1], p.Stack, th.Stack)
	}
	big, size, err := e.threadsPage(map[string]int{"startFrame": 100, "levels": 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(big.Threads[0].Frames); n != server.MaxFrameLevels || big.Threads[0].Frames[0].Index != 100 {
		t.Errorf("levels 1<<20 sent %d frames (cap %d), %d bytes", n, server.MaxFrameLevels, size)
	}
	var je *jsonrpc2.Error
	for _, bad := range []any{map[string]any{"levels": "all"}, map[string]int{"thread": 1}, map[string]int{"startFrame": -1}, []int{1}} {
		if _, _, err := e.threadsPage(bad); !errors.As(err, &je) || je.Code != jsonrpc2.InvalidParams {
			t.Errorf("faultline/threads %v: %v, want InvalidParams", bad, err)
		}
	}
	if err := e.Shutdown(); err != nil {
		t.Error(err)
	}
}
