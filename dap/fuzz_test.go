package dap

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// FuzzRequests: any request body, dispatched to an adapter with the
// null_inline core open, is answered within the fuzzbudget oracle and
// never reaches the panic recovery ("internal error").
func FuzzRequests(f *testing.F) {
	core, _ := filepath.Abs(filepath.Join("..", "testdata", "native", "cores", "null_inline.core.gz"))
	exe, _ := filepath.Abs(filepath.Join("..", "testdata", "native", "bin", "null_inline"))
	s := New(Options{})
	var out bytes.Buffer
	s.w = &out
	v, err := s.open(LaunchArgs{CoreFile: core, Program: exe, Offline: true})
	if err != nil {
		f.Fatal(err)
	}
	s.model, s.sess = v, v.sess
	defer s.close()
	tid := v.threads[0].id
	for _, req := range []map[string]any{
		{"command": "stackTrace", "arguments": map[string]any{"threadId": tid, "startFrame": 1, "levels": int64(1<<63 - 1)}},
		{"command": "evaluate", "arguments": map[string]any{"expression": "b->next->next->value", "frameId": 5}},
		{"command": "evaluate", "arguments": map[string]any{"expression": "a[99999999999999999999]", "frameId": 5}},
		{"command": "scopes", "arguments": map[string]any{"frameId": 5}},
		{"command": "variables", "arguments": map[string]any{"variablesReference": 1, "start": 1 << 62, "count": 1 << 62}},
		{"command": "readMemory", "arguments": map[string]any{"memoryReference": "0xffffffffffffffff", "offset": -1, "count": 1 << 40}},
		{"command": "disassemble", "arguments": map[string]any{"memoryReference": "0x0", "instructionOffset": -(1 << 40), "instructionCount": 1 << 40}},
		{"command": "source", "arguments": map[string]any{"sourceReference": 1 << 62}},
	} {
		req["seq"], req["type"] = 1, "request"
		b, _ := json.Marshal(req)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzbudget.Check(t, len(body), fuzzbudget.Default, func() {
			out.Reset()
			s.done = false
			s.dispatch(body)
			if strings.Contains(out.String(), "internal error in") {
				t.Fatalf("a handler panicked: %.2000s", out.String())
			}
		})
	})
}
