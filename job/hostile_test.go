package job

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/boundtest"
)

func TestMain(m *testing.M) { os.Exit(boundtest.Main(m)) }

// Hostile rank files (issue 24 item 3) through the real binary's `job
// report`: one call path tens of thousands of frames deep, and a function
// name of megabytes. The report's size must follow the caps (128 frames a
// path, 512 bytes a name), not the file.

// deepRankFile writes a summary of rank r whose one stack is depth frames
// of a name of nameLen bytes (index 0 repeated: a 2-byte JSON entry each).
func deepRankFile(t *testing.T, dir string, r, depth, nameLen int) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `{"schema":%q,"job":{"hostname":"n0","rank":%d},"dump":{"path":"core","format":"elf-core"},"threadCount":1,`, SummarySchema, r)
	fmt.Fprintf(&b, `"frames":[{"function":"f%s"}],"stacks":[{"threads":[1],"crashed":true,"frames":[0`, strings.Repeat("x", nameLen))
	for range depth - 1 {
		b.WriteString(",0")
	}
	b.WriteString("]}]}\n")
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("rank-%05d.json", r)), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBoundReportDeepPath(t *testing.T) {
	dir := t.TempDir()
	deepRankFile(t, dir, 0, 50_000, 1) // a 100 KB file
	deepRankFile(t, dir, 1, 129, 1)
	for _, args := range [][]string{{"job", "report", "--json", dir}, {"job", "report", dir}} {
		r := boundtest.Run(t, boundtest.Cmd{Args: args, Limits: boundtest.Limits{Wall: 60 * time.Second, RSSKiB: 1 << 20}})
		if r.Killed != "" || r.Exit != 0 || len(r.Stdout) > 256<<10 || r.MaxRSSKiB > 128<<10 {
			t.Errorf("bound: report under 256 KiB, maxrss under 128 MiB; got %v, %d bytes\n%.2000s", r, len(r.Stdout), r.Stderr)
		}
		if !strings.Contains(r.Stdout, "49872 frames") {
			t.Errorf("the report does not say frames were left out of the deep path:\n%.3000s", r.Stdout)
		}
	}
}

func TestBoundReportLongName(t *testing.T) {
	dir := t.TempDir()
	deepRankFile(t, dir, 0, 3, 16<<20)
	r := boundtest.Run(t, boundtest.Cmd{Args: []string{"job", "report", "--json", dir}, Limits: boundtest.Limits{Wall: 60 * time.Second, RSSKiB: 1 << 20}})
	if r.Killed != "" || r.Exit != 0 || len(r.Stdout) > 64<<10 || r.MaxRSSKiB > 160<<10 {
		t.Errorf("bound: a 16 MiB name gives a report under 64 KiB, maxrss under 160 MiB; got %v, %d bytes\n%.2000s", r, len(r.Stdout), r.Stderr)
	}
}

// TestBoundReportTreeNodes: rank files whose 128-frame paths share no
// prefix give a node per frame; the report keeps maxExportNodes of them
// and says how many it left out, and the JSON stays linear in that.
func TestBoundReportTreeNodes(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	fmt.Fprintf(&b, `{"schema":%q,"job":{"hostname":"n0","rank":0},"dump":{"path":"core","format":"elf-core"},"threadCount":1,"frames":[{"function":"inner"}`, SummarySchema)
	const paths = 1100 // 1100 × 128 nodes > maxExportNodes
	for i := range paths {
		fmt.Fprintf(&b, `,{"function":"root%d"}`, i)
	}
	b.WriteString(`],"stacks":[`)
	for i := range paths {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"threads":[1],"frames":[` + strings.Repeat("0,", 127) + strconv.Itoa(i+1) + "]}")
	}
	b.WriteString("]}\n")
	if err := os.WriteFile(filepath.Join(dir, "rank-0.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := boundtest.Run(t, boundtest.Cmd{Args: []string{"job", "report", "--json", dir}, Limits: boundtest.Limits{Wall: 60 * time.Second, RSSKiB: 1 << 20}})
	var rep Report
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("%v: %v\n%.2000s", r, err, r.Stderr)
	}
	nodes := 0
	var count func(n *TreeNode)
	count = func(n *TreeNode) {
		nodes++
		for _, c := range n.Children {
			count(c)
		}
	}
	count(rep.Tree)
	cut := len(rep.Problems) == 1 && strings.Contains(rep.Problems[0].Message, "tree cut at 131072 nodes")
	if nodes != maxExportNodes || !cut || len(r.Stdout) > maxExportNodes*100 || r.MaxRSSKiB > 256<<10 {
		t.Errorf("bound: %d tree nodes and a problem, under %d bytes and 256 MiB; got %d nodes, problems %v, %d bytes, %v",
			maxExportNodes, maxExportNodes*100, nodes, rep.Problems, len(r.Stdout), r)
	}
}

// TestReportJSONIsEncodingJSON: the streamed report decodes to what
// encoding/json writes for it.
func TestReportJSONIsEncodingJSON(t *testing.T) {
	var sums []*Summary
	for r := range 8 {
		main := barrier
		if r == 3 {
			main = spin
		}
		sums = append(sums, synthRank(r, "node<1>", [][]string{main, idle}, []int{1, 3}))
	}
	rep := Merge(loaded(sums...), []FileProblem{{File: "x", Message: "a & b"}})
	var streamed bytes.Buffer
	if err := rep.JSON(&streamed); err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(streamed.Bytes(), &a); err != nil {
		t.Fatalf("%v\n%s", err, streamed.Bytes())
	}
	json.Unmarshal(want, &b)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("streamed JSON differs from encoding/json's:\n%s\nwant\n%s", streamed.Bytes(), want)
	}
	if !strings.Contains(streamed.String(), `"node<1>"`) || !strings.Contains(streamed.String(), "\n  \"ranks\": 8,\n") {
		t.Errorf("want indented JSON without HTML escapes:\n%s", streamed.Bytes())
	}
}
