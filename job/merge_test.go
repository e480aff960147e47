package job

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestFormatRanks(t *testing.T) {
	var big []int
	for r := 0; r < 512; r++ {
		if r != 255 {
			big = append(big, r)
		}
	}
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{3}, "3"},
		{[]int{0, 1, 2, 4, 7, 8}, "0-2,4,7-8"},
		{[]int{5, 9}, "5,9"},
		{big, "0-254,256-511"},
	} {
		if got := FormatRanks(tc.in); got != tc.want {
			t.Errorf("FormatRanks(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

var (
	barrier = []string{"futex_wait", "barrier_wait", "allreduce", "train_step", "main"}
	spin    = []string{"compute_loss", "train_step", "main"}
	idle    = []string{"pthread_cond_wait", "worker_loop", "start_thread"}
)

// TestPrefixTreeAndOddOneOut: rank 3 of 8 computes while the others wait
// in the collective; it is the odd one out, with its own frames, and the
// tree splits under train_step.
func TestPrefixTreeAndOddOneOut(t *testing.T) {
	var sums []*Summary
	for r := 0; r < 8; r++ {
		main := barrier
		if r == 3 {
			main = spin
		}
		host := "node1"
		if r >= 4 {
			host = "node2"
		}
		sums = append(sums, synthRank(r, host, [][]string{main, idle}, []int{1, 3}))
	}
	rep := Merge(loaded(sums...), nil)
	if rep.Ranks != 8 || rep.Missing != "" {
		t.Fatalf("ranks %d missing %q, want 8 and none", rep.Ranks, rep.Missing)
	}
	if len(rep.Classes) != 2 {
		t.Fatalf("%d classes, want 2: %+v", len(rep.Classes), rep.Classes)
	}
	odd, big := rep.Classes[0], rep.Classes[1]
	if odd.Ranks != "3" || odd.Count != 1 || !reflect.DeepEqual(odd.Hosts, []string{"node1"}) || !reflect.DeepEqual(odd.Frames, spin) {
		t.Errorf("odd class = %+v, want rank 3 on node1 with frames %v", odd, spin)
	}
	if big.Ranks != "0-2,4-7" || big.Count != 7 || !reflect.DeepEqual(big.Frames, barrier) || big.Paths != 2 || big.Threads != 4 {
		t.Errorf("largest class = %+v", big)
	}
	if !reflect.DeepEqual(rep.OddOnesOut, []string{"3"}) {
		t.Errorf("oddOnesOut = %v, want [3]", rep.OddOnesOut)
	}
	main := rep.Tree.Children[0]
	if main.Function != "main" || main.Ranks != "0-7" || main.Threads != 8 {
		t.Fatalf("tree root child = %+v, want main [0-7] 8 threads", main)
	}
	step := main.Children[0]
	if step.Function != "train_step" || len(step.Children) != 2 ||
		step.Children[0].Function != "allreduce" || step.Children[0].Ranks != "0-2,4-7" ||
		step.Children[1].Function != "compute_loss" || step.Children[1].Ranks != "3" {
		t.Errorf("train_step node = %+v", step)
	}
	if th := rep.Tree.Children[1]; th.Function != "start_thread" || th.Ranks != "0-7" || th.Threads != 24 {
		t.Errorf("worker subtree = %+v, want start_thread [0-7] 24 threads", th)
	}
	if want := []Placement{{"node1", "0-3", 4}, {"node2", "4-7", 4}}; !reflect.DeepEqual(rep.Hosts, want) {
		t.Errorf("hosts = %+v, want %+v", rep.Hosts, want)
	}
}

// TestTies: equal-sized classes are ordered by their lowest rank, and
// when the largest classes tie no class is an odd one out.
func TestTies(t *testing.T) {
	rep := Merge(loaded(
		synthRank(0, "h", [][]string{spin}, []int{1}),
		synthRank(1, "h", [][]string{barrier}, []int{1}),
		synthRank(2, "h", [][]string{spin}, []int{1}),
		synthRank(3, "h", [][]string{barrier}, []int{1}),
	), nil)
	if len(rep.Classes) != 2 || rep.Classes[0].Ranks != "0,2" || rep.Classes[1].Ranks != "1,3" {
		t.Fatalf("classes = %+v, want [0,2] then [1,3]", rep.Classes)
	}
	if len(rep.OddOnesOut) != 0 {
		t.Errorf("oddOnesOut = %v, want none when the two classes tie", rep.OddOnesOut)
	}
	rep = Merge(loaded(
		synthRank(0, "h", [][]string{barrier}, []int{1}),
		synthRank(1, "h", [][]string{idle}, []int{1}),
		synthRank(2, "h", [][]string{barrier}, []int{1}),
		synthRank(3, "h", [][]string{spin}, []int{1}),
	), nil)
	if got := rep.OddOnesOut; !reflect.DeepEqual(got, []string{"1", "3"}) {
		t.Errorf("oddOnesOut = %v, want [1 3] (size ties by rank)", got)
	}
}

func TestMissingRanks(t *testing.T) {
	var sums []*Summary
	for r := 0; r < 9; r++ {
		if r == 5 {
			continue
		}
		s := synthRank(r, "h", [][]string{barrier}, []int{1})
		w := 10
		s.Job.WorldSize = &w
		sums = append(sums, s)
	}
	rep := Merge(loaded(sums...), nil)
	if rep.Ranks != 10 || rep.Missing != "5,9" {
		t.Errorf("ranks %d missing %q, want 10 and \"5,9\"", rep.Ranks, rep.Missing)
	}
	if len(rep.Classes) != 1 || rep.Classes[0].Ranks != "0-4,6-8" || rep.Classes[0].Count != 8 {
		t.Errorf("classes = %+v", rep.Classes)
	}
}

// TestDistinguishingPath: the odd rank's main thread is like everyone's,
// one of its workers is not; the class shows the worker's path.
func TestDistinguishingPath(t *testing.T) {
	stuck := []string{"read", "load_batch", "worker_loop", "start_thread"}
	rep := Merge(loaded(
		synthRank(0, "h", [][]string{barrier, idle}, []int{1, 2}),
		synthRank(1, "h", [][]string{barrier, idle, stuck}, []int{1, 1, 1}),
		synthRank(2, "h", [][]string{barrier, idle}, []int{1, 2}),
	), nil)
	if len(rep.Classes) != 2 || rep.Classes[0].Ranks != "1" || !reflect.DeepEqual(rep.Classes[0].Frames, stuck) {
		t.Errorf("classes = %+v, want rank 1 first with frames %v", rep.Classes, stuck)
	}
}

func TestSignatureGroups(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	segv := []string{"store", "worker", "main"}
	abrt := []string{"abort", "check", "main"}
	rep := Merge(loaded(
		synthRank(0, "n1", [][]string{barrier}, []int{1}),
		crashed(synthRank(1, "n1", [][]string{segv}, []int{1}), "store<-worker", t0.Add(2*time.Second)),
		crashed(synthRank(2, "n2", [][]string{abrt}, []int{1}), "abort<-check", t0.Add(time.Second)),
		crashed(synthRank(3, "n2", [][]string{segv}, []int{1}), "store<-worker", t0),
	), nil)
	if len(rep.Signatures) != 2 {
		t.Fatalf("signatures = %+v, want 2 groups", rep.Signatures)
	}
	first, second := rep.Signatures[0], rep.Signatures[1]
	if first.Signature != "store<-worker" || first.Ranks != "1,3" || first.FirstRank != 3 || first.FirstHost != "n2" || !first.FirstTime.Equal(t0) {
		t.Errorf("first group = %+v, want store<-worker ranks 1,3 first rank 3 on n2 at t0", first)
	}
	if second.Signature != "abort<-check" || second.Ranks != "2" || second.FirstRank != 2 {
		t.Errorf("second group = %+v", second)
	}
	for _, c := range rep.Classes {
		if c.Ranks == "1,3" && c.Signature != "store<-worker" {
			t.Errorf("class 1,3 signature %q", c.Signature)
		}
	}
	if len(rep.Classes) != 3 {
		t.Errorf("%d classes, want 3 (hang, and two signatures)", len(rep.Classes))
	}
}

func TestRankAssignment(t *testing.T) {
	a := synthRank(4, "h", [][]string{barrier}, []int{1})
	b := synthRank(4, "h", [][]string{spin}, []int{1})
	c := synthRank(0, "h", [][]string{spin}, []int{1})
	c.Job.Rank = nil
	rep := Merge([]Loaded{{"a.json", a}, {"b.json", b}, {"c.json", c}}, nil)
	if len(rep.Problems) != 2 || rep.Problems[0].File != "b.json" || !strings.Contains(rep.Problems[0].Message, "rank 4 again") ||
		rep.Problems[1].File != "c.json" || !strings.Contains(rep.Problems[1].Message, "no rank") {
		t.Errorf("problems = %+v", rep.Problems)
	}
	if rep.Ranks != 5 || rep.Missing != "0-3" {
		t.Errorf("ranks %d missing %q", rep.Ranks, rep.Missing)
	}
	// No summary with a rank: numbered in file order.
	a.Job.Rank, b.Job.Rank = nil, nil
	rep = Merge([]Loaded{{"a.json", a}, {"b.json", b}}, nil)
	if rep.Ranks != 2 || len(rep.Classes) != 2 || rep.Classes[0].Ranks != "0" {
		t.Errorf("rankless merge = %+v", rep)
	}
}

// TestMalformedFilesReportedPerFile: truncated, garbage, foreign JSON and
// a summary indexing past its frame table are each reported with their
// file; the good files merge.
func TestMalformedFilesReportedPerFile(t *testing.T) {
	dir := t.TempDir()
	var good bytes.Buffer
	for r := 0; r < 3; r++ {
		good.Reset()
		if err := Write(&good, synthRank(r, "h", [][]string{barrier}, []int{1})); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "rank-"+string(rune('0'+r))+".json"), good.Bytes(), 0o644)
	}
	// Summary lines (analyze --json --summary over several cores) in one file.
	good.Reset()
	Write(&good, synthRank(3, "h", [][]string{barrier}, []int{1}))
	Write(&good, synthRank(4, "h", [][]string{barrier}, []int{1}))
	os.WriteFile(filepath.Join(dir, "lines.json"), good.Bytes(), 0o644)
	bad := synthRank(9, "h", [][]string{barrier}, []int{1})
	bad.Stacks[0].Frames[0] = 99
	badJSON, _ := json.Marshal(bad)
	files := map[string][]byte{
		"truncated.json": good.Bytes()[:good.Len()/4],
		"garbage.json":   []byte("{\"schema\": \"faultline.rank-summary/v1\", \"job\": ]"),
		"foreign.json":   []byte(`{"schema": "other/v2"}`),
		"badindex.json":  badJSON,
	}
	for name, b := range files {
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	rep, err := MergeDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Ranks != 5 || len(rep.Classes) != 1 || rep.Classes[0].Ranks != "0-4" {
		t.Errorf("merged %d ranks, classes %+v; want ranks 0-4 in one class", rep.Ranks, rep.Classes)
	}
	want := map[string]string{
		"badindex.json":  "names frame 99",
		"foreign.json":   `schema "other/v2"`,
		"garbage.json":   "invalid character ']'",
		"truncated.json": "truncated",
	}
	if len(rep.Problems) != len(want) {
		t.Fatalf("problems = %+v, want one per bad file", rep.Problems)
	}
	for _, p := range rep.Problems {
		if w := want[filepath.Base(p.File)]; w == "" || !strings.Contains(p.Message, w) {
			t.Errorf("problem %+v, want a message with %q", p, w)
		}
		if filepath.Base(p.File) == "garbage.json" && p.Offset != 48 {
			t.Errorf("garbage.json offset %d, want 48", p.Offset)
		}
	}
	var md bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"# Job report: 5 ranks, 5 summarized", "## Problems", "truncated.json (byte ", "): truncated", "garbage.json (byte 48)"} {
		if !strings.Contains(md.String(), w) {
			t.Errorf("markdown lacks %q:\n%s", w, md.String())
		}
	}
}

// TestBadNode: every rank of one host, and only those, in an odd class is
// named as a suspect node.
func TestBadNode(t *testing.T) {
	var sums []*Summary
	for r := 0; r < 12; r++ {
		host, main := fmt.Sprintf("n%d", r/4+1), barrier
		if r >= 8 {
			main = spin
		}
		sums = append(sums, synthRank(r, host, [][]string{main}, []int{1}))
	}
	rep := Merge(loaded(sums...), nil)
	if !reflect.DeepEqual(rep.OddOnesOut, []string{"8-11"}) || !reflect.DeepEqual(rep.Classes[0].Hosts, []string{"n3"}) {
		t.Fatalf("oddOnesOut %v classes %+v", rep.OddOnesOut, rep.Classes)
	}
	var md bytes.Buffer
	rep.Markdown(&md)
	if !strings.Contains(md.String(), "All 4 ranks of host n3 are in one odd class: suspect the node.") {
		t.Errorf("markdown does not name the node:\n%s", md.String())
	}
}
