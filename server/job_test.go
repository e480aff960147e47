package server_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/faultline-dev/faultline/job"
	"github.com/faultline-dev/faultline/server"
)

// rankSummary is rank r of 4 stopped in fn (called from main) at line of
// file: the shape `faultline job collect` writes.
func rankSummary(r int, file, fn string, line int) *job.Summary {
	s := &job.Summary{Schema: job.SummarySchema, ThreadCount: 1}
	rank, world := r, 4
	s.Job = job.Info{Hostname: "node1", Rank: &rank, WorldSize: &world, PID: 100 + r, Source: "live"}
	s.Dump.PID = 100 + r
	s.Frames = []job.FrameRef{{Function: fn, File: file, Line: line}, {Function: "main", File: file, Line: 20}}
	s.Stacks = []job.Stack{{Threads: []int{100 + r}, Frames: []int{0, 1}}}
	return s
}

// TestJobReportCommand: faultline.jobReport merges a directory of rank
// summaries, returns the merged report (tree and classes) and puts the odd
// rank's frames on their source lines as diagnostics.
func TestJobReportCommand(t *testing.T) {
	folder := t.TempDir()
	src := filepath.Join(folder, "rank.c")
	if err := os.WriteFile(src, []byte(strings.Repeat("/* line */\n", 30)), 0o644); err != nil {
		t.Fatal(err)
	}
	ranks := filepath.Join(folder, "ranks")
	os.MkdirAll(ranks, 0o755)
	for r := 0; r < 4; r++ {
		fn, line := "collective_wait", 8
		if r == 2 {
			fn, line = "compute_stuck", 14
		}
		var b bytes.Buffer
		if err := job.Write(&b, rankSummary(r, src, fn, line)); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(ranks, fmt.Sprintf("rank-%05d.json", r)), b.Bytes(), 0o644)
	}
	e := newEnvIn(t, folder, map[string]any{}, server.Options{})
	var rep job.Report
	if err := e.Execute(server.CommandJobReport, map[string]string{"dir": ranks}, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Ranks != 4 || len(rep.OddOnesOut) != 1 || rep.OddOnesOut[0] != "2" || rep.Tree == nil ||
		rep.Tree.Children[0].Function != "main" || len(rep.Tree.Children[0].Children) != 2 {
		t.Fatalf("report = %+v", rep)
	}
	u := e.URI("rank.c")
	e.Await("diagnostics on rank.c", func(c *fakeClient) bool { return len(c.diags[u]) == 2 })
	ds := e.Diagnostics(u)
	warn, info := ds[0], ds[1]
	if warn.Severity != protocol.DiagnosticSeverityWarning || warn.Range.Start.Line != 13 ||
		!strings.Contains(message(warn), "rank 2 stopped here in compute_stuck: odd one out of 4 ranks (the most, ranks 0-1,3, are elsewhere)") {
		t.Errorf("first diagnostic = %+v (%s)", warn, message(warn))
	}
	if info.Severity != protocol.DiagnosticSeverityInformation || info.Range.Start.Line != 19 || !strings.Contains(message(info), "main called from here") {
		t.Errorf("second diagnostic = %+v (%s)", info, message(info))
	}
	if err := e.Execute(server.CommandJobReport, map[string]string{}, nil); err == nil || !strings.Contains(err.Error(), `wants {"dir": DIR}`) {
		t.Errorf("jobReport without dir: %v", err)
	}
}
