package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/logs"
)

// FuzzCompare feeds arbitrary faultline JSON and gdb text through the whole
// of framecheck: decoding, parsing, aligning and printing must never panic.
func FuzzCompare(f *testing.F) {
	gdb, err := os.ReadFile("testdata/bigjob8.gdb.txt")
	if err != nil {
		f.Fatal(err)
	}
	gl, err := logs.ParseGDB(bytes.NewReader(gdb))
	if err != nil {
		f.Fatal(err)
	}
	js, err := json.Marshal(crashFromGDB(gl))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(js, string(gdb))
	f.Add([]byte(`{"schema":"faultline.crash/v1","crashingThread":7,"threads":[{"id":7,"frames":[{"function":"f(int)","file":"../a.c","line":3}]}]}`),
		"Thread 1 (LWP 7):\n#0  f (x=1) at ../a.c:3\n")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		var c analysis.Crash
		if json.Unmarshal(data, &c) != nil {
			return
		}
		gl, err := logs.ParseGDB(bytes.NewReader([]byte(text)))
		if err != nil {
			return
		}
		r := Compare(&c, gl)
		r.Print(io.Discard, 5)
		if r.FramesAgree > r.Frames {
			t.Fatalf("%d frames agree of %d", r.FramesAgree, r.Frames)
		}
		if r.CrashOK() && r.CrashAgree != r.CrashFrames {
			t.Fatal("CrashOK with disagreeing frames")
		}
	})
}
