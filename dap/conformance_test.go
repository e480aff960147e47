package dap_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/internal/crashbuild"
	"github.com/faultline-dev/faultline/internal/testgz"
)

// conformanceCase is one corpus core the DebugClient walks, with what gdb
// says about it (filled in by gdbExpect).
type conformanceCase struct {
	Name    string `json:"name"`
	Core    string `json:"core"`
	Program string `json:"program"`
	// Workspace is the launch's workspaceFolders[0] ("" for none: the
	// comp_dir must still find the sources).
	Workspace string `json:"workspace"`
	// Culprit is the frame the Variables view must show (gdb numbering).
	Culprit int `json:"culprit"`
	// Deref are pointer variables of the culprit frame whose members
	// gdb prints with `print *NAME`.
	Deref []string `json:"deref"`
	// Memory is a gdb expression for an address and x's format; the
	// client reads the same bytes with readMemory.
	Memory string `json:"memory,omitempty"`

	// Launch, for source-lookup cases, is the launch configuration and
	// ExpectSource the file the top frame must open.
	Launch       map[string]any `json:"launch,omitempty"`
	ExpectSource string         `json:"expectSource,omitempty"`
	ExpectLine   int            `json:"expectLine,omitempty"`
	// ExpectOrigin is what the top frame's source.origin must contain
	// (a copy fetched from debuginfod); "" for a file of this machine,
	// which has none.
	ExpectOrigin string `json:"expectOrigin,omitempty"`
	// ExpectText is line ExpectLine of the source served by reference
	// when ExpectOrigin is set.
	ExpectText string `json:"expectText,omitempty"`
	// ExpectNoSource: the top frame has no local or fetched source (only
	// its generated document).
	ExpectNoSource bool `json:"expectNoSource,omitempty"`
	// ExactFrames are frames (gdb numbering) whose Arguments and Locals
	// must list exactly gdb's info args and info locals, in order,
	// optimized-out ones included.
	ExactFrames []int `json:"exactFrames,omitempty"`

	Frames      []gdbFrame        `json:"frames"`
	DerefFields map[string]string `json:"derefFields"`
	MemoryAddr  string            `json:"memoryAddr,omitempty"`
	MemoryWords []string          `json:"memoryWords,omitempty"`
	Thread      int               `json:"thread"`
}

// gdbFrame is one frame of gdb's bt with its `info args` / `info locals`.
type gdbFrame struct {
	Function string            `json:"function"`
	File     string            `json:"file"`
	Line     int               `json:"line"`
	Args     map[string]string `json:"args"`
	Locals   map[string]string `json:"locals"`
	// ArgList and LocalList are info args and info locals as gdb lists
	// them, "name = value" in order, repeated names included.
	ArgList   []string `json:"argList"`
	LocalList []string `json:"localList"`
	Signal    bool     `json:"signal"`
	// EntryValues are the arguments gdb could print only from the
	// caller's call site (bt shows "name=name@entry=..."): DW_OP_entry_value,
	// which the frame-values engine does not resolve yet.
	EntryValues []string `json:"entryValues"`
}

// TestDebugClient builds faultline and drives `faultline dap` over stdio
// with Microsoft's DAP test client (@vscode/debugadapter-testsupport's
// DebugClient, pinned by dap/conformance/package-lock.json) through
// launch → stopped → threads → stackTrace → scopes → variables → evaluate
// → readMemory → disassemble → source → disconnect on corpus cores, the
// frames and values checked against gdb's bt, `info args`, `info locals`,
// `print *p` and `x` on the same core, run here.
func TestDebugClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary, runs gdb and node")
	}
	gdb := lookTool(t, "gdb", "gdb (apt-get install gdb)")
	native, _ := filepath.Abs(filepath.Join("..", "testdata", "native"))
	tmp := t.TempDir()
	// The corpus was compiled in another checkout: its DW_AT_comp_dir may
	// not exist here, so these find their sources through the workspace
	// or a sourceMap rule from that comp_dir.
	cases := []conformanceCase{
		{Name: "null_inline", Culprit: 4, Deref: []string{"a", "b"}, Memory: "(char*)a+8", Workspace: native},
		{Name: "reraise", Culprit: 3, Deref: []string{"t"}},
		{Name: "static_dtor", Culprit: 0, Deref: []string{"this"}, Workspace: native},
		{Name: "threads64", Culprit: 0, Workspace: native},
	}
	for i := range cases {
		c := &cases[i]
		c.Core = filepath.Join(native, "cores", c.Name+".core.gz")
		c.Program = filepath.Join(native, "bin", c.Name)
		gdbExpect(t, gdb, c, tmp)
	}
	cases[1].Launch = map[string]any{"sourceMap": map[string]string{corpusCompDir(t, cases[1]): native}}
	// The apport report of the same crash (Ubuntu's /var/crash/*.crash)
	// opens as its core: gdb's view of the core holds for it.
	apport := cases[0]
	apport.Name, apport.Core = "null_inline (apport report)", filepath.Join(native, "cores", "null_inline.crash")
	cases = append(cases, apport)
	cases = append(cases, lookupCases(t, tmp)...)
	runDebugClient(t, tmp, cases)
}

// runDebugClient builds faultline into tmp and walks cases with
// dap/conformance/client.js (node and the pinned DebugClient).
func runDebugClient(t *testing.T, tmp string, cases []conformanceCase) {
	t.Helper()
	node := lookTool(t, "node", "Node.js 18+ (apt-get install nodejs npm)")
	conf, _ := filepath.Abs("conformance")
	if _, err := os.Stat(filepath.Join(conf, "node_modules", "@vscode", "debugadapter-testsupport", "package.json")); err != nil {
		t.Fatal("@vscode/debugadapter-testsupport is not installed: run `npm ci --prefix dap/conformance`")
	}
	bin := filepath.Join(tmp, "faultline")
	if out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	spec := filepath.Join(tmp, "cases.json")
	if d := os.Getenv("FAULTLINE_DAP_KEEP"); d != "" {
		spec = filepath.Join(d, "cases.json")
	}
	b, _ := json.MarshalIndent(cases, "", "  ")
	if err := os.WriteFile(spec, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, node, filepath.Join(conf, "client.js"), bin, spec)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("node client.js:\n%s", out.String())
	if err != nil {
		t.Fatalf("DebugClient: %v", err)
	}
	if !strings.Contains(out.String(), fmt.Sprintf("dap conformance: %d cores passed", len(cases))) {
		t.Fatal("the client did not report every core passed")
	}
}

// corpusCompDir is the DW_AT_comp_dir the corpus was compiled in.
func corpusCompDir(t *testing.T, c conformanceCase) string {
	t.Helper()
	m, err := analysis.Open(c.Core, analysis.Options{Exe: c.Program})
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range m.Threads {
		for _, f := range th.Frames {
			if f.CompDir != "" && f.File != "" && !filepath.IsAbs(f.File) {
				return f.CompDir
			}
		}
	}
	t.Fatalf("%s: no frame with a relative file under a comp_dir", c.Name)
	return ""
}

// lookupCases are the source-lookup cases on a program compiled here
// (comp_dir = a temporary directory): no workspace, an empty
// workspaceFolders, a workspace without the sources, a sourceMap rule
// (wins over comp_dir), two copies of the file in the workspace (the
// comp_dir one wins, even with the executable beside the other), and two
// copies with the comp_dir gone (the copy nearest the executable wins).
func lookupCases(t *testing.T, tmp string) []conformanceCase {
	p := crashbuild.Build(t, filepath.Join(tmp, "build"))
	mapped := filepath.Join(tmp, "mapped")
	copyFile(t, p.Source, filepath.Join(mapped, "src", "crash.c"))
	empty := filepath.Join(tmp, "empty-workspace")
	copyFile(t, p.Exe, filepath.Join(empty, "README"))

	inWS := crashbuild.Build(t, filepath.Join(tmp, "ws", "build"))
	other := filepath.Join(tmp, "ws", "other")
	copyFile(t, inWS.Source, filepath.Join(other, "src", "crash.c"))
	copyFile(t, inWS.Exe, filepath.Join(other, "bin", "crash"))

	moved := crashbuild.Build(t, filepath.Join(tmp, "build2"))
	ws := filepath.Join(tmp, "two-copies")
	copyFile(t, moved.Source, filepath.Join(ws, "a-old", "src", "crash.c"))
	copyFile(t, moved.Source, filepath.Join(ws, "b-new", "src", "crash.c"))
	copyFile(t, moved.Exe, filepath.Join(ws, "b-new", "bin", "crash"))
	if err := os.RemoveAll(filepath.Join(moved.Dir, "src")); err != nil {
		t.Fatal(err)
	}
	lookup := func(name string, prog crashbuild.Program, exe, want string, extra map[string]any) conformanceCase {
		launch := map[string]any{"coreFile": prog.Core, "program": exe}
		for k, v := range extra {
			launch[k] = v
		}
		return conformanceCase{Name: "lookup: " + name, Launch: launch, ExpectSource: want, ExpectLine: crashbuild.CrashLine}
	}
	return []conformanceCase{
		lookup("no workspace, comp_dir", p, p.Exe, p.Source, nil),
		lookup("workspaceFolders [], comp_dir", p, p.Exe, p.Source, map[string]any{"workspaceFolders": []string{}}),
		lookup("workspace without the sources, comp_dir", p, p.Exe, p.Source, map[string]any{"workspaceFolders": []string{empty}}),
		lookup("sourceMap before comp_dir", p, p.Exe, filepath.Join(mapped, "src", "crash.c"),
			map[string]any{"sourceMap": map[string]string{p.Dir: mapped}}),
		lookup("two copies: the comp_dir one, though the executable is beside the other", inWS, filepath.Join(other, "bin", "crash"),
			inWS.Source, map[string]any{"workspaceFolders": []string{filepath.Join(tmp, "ws")}}),
		lookup("two copies, comp_dir gone: nearest the executable", moved, filepath.Join(ws, "b-new", "bin", "crash"),
			filepath.Join(ws, "b-new", "src", "crash.c"), map[string]any{"workspaceFolders": []string{ws}}),
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

func lookTool(t *testing.T, name, what string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed: this test needs %s", name, what)
	}
	return p
}

var (
	btLine    = regexp.MustCompile(`^#(\d+)\s+(?:0x[0-9a-f]+ in )?(.+?) \(.*\)(?: at (\S+):(\d+))?(?: from .*)?$`)
	varLine   = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*) = (.*)$`)
	entryArg  = regexp.MustCompile(`[(, ](\w+)=(\w+)@entry=`)
	gdbMarker = regexp.MustCompile(`^@@(\w+) ?(\S*)$`)
)

// gdbExpect runs gdb on the case's core: the crashing thread's bt, every
// frame's `info args` and `info locals`, `print *NAME` of Deref in the
// culprit frame, and `x/2dw` at Memory.
func gdbExpect(t *testing.T, gdb string, c *conformanceCase, tmp string) {
	t.Helper()
	core := c.Core
	if strings.HasSuffix(core, ".gz") {
		core = filepath.Join(tmp, c.Name+".core")
		testgz.Gunzip(t, c.Core, core)
	}
	args := []string{"-batch", "-nx", "-ex", "set pagination off", "-ex", "set print pretty off", "-ex", "set print symbol off",
		"-ex", "set width 0", "-ex", "echo @@BT\\n", "-ex", "bt", "-ex", "echo @@TID\\n", "-ex", "info threads"}
	for i := 0; i < 12; i++ {
		args = append(args, "-ex", fmt.Sprintf("echo @@FRAME %d\\n", i), "-ex", fmt.Sprintf("frame %d", i),
			"-ex", "echo @@ARGS\\n", "-ex", "info args", "-ex", "echo @@LOCALS\\n", "-ex", "info locals")
	}
	args = append(args, "-ex", fmt.Sprintf("frame %d", c.Culprit))
	for _, d := range c.Deref {
		args = append(args, "-ex", "echo @@DEREF "+d+"\\n", "-ex", "print *"+d)
	}
	if c.Memory != "" {
		args = append(args, "-ex", "echo @@MEMORY\\n", "-ex", "x/2dw "+c.Memory)
	}
	args = append(args, c.Program, core)
	out, err := exec.Command(gdb, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	parseGDB(t, c, string(out))
	if len(c.Frames) == 0 || c.Thread == 0 {
		t.Fatalf("gdb printed no frames or thread for %s:\n%s", c.Name, out)
	}
}

func parseGDB(t *testing.T, c *conformanceCase, out string) {
	section, frame := "", -1
	c.DerefFields = map[string]string{}
	deref := ""
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r")
		if m := gdbMarker.FindStringSubmatch(line); m != nil {
			section = m[1]
			switch section {
			case "FRAME":
				fmt.Sscanf(m[2], "%d", &frame)
			case "DEREF":
				deref = m[2]
			}
			continue
		}
		switch section {
		case "BT":
			if strings.Contains(line, "<signal handler called>") {
				c.Frames = append(c.Frames, gdbFrame{Function: "<signal handler called>", Signal: true})
			} else if m := btLine.FindStringSubmatch(line); m != nil {
				f := gdbFrame{Function: m[2], File: m[3]}
				for _, e := range entryArg.FindAllStringSubmatch(line, -1) {
					f.EntryValues = append(f.EntryValues, e[1])
				}
				fmt.Sscanf(m[4], "%d", &f.Line)
				c.Frames = append(c.Frames, f)
			}
		case "TID":
			if m := regexp.MustCompile(`^\* \d+\s+Thread 0x[0-9a-f]+ \(LWP (\d+)\)`).FindStringSubmatch(line); m != nil {
				fmt.Sscanf(m[1], "%d", &c.Thread)
			}
		case "ARGS", "LOCALS":
			m := varLine.FindStringSubmatch(line)
			if m == nil || frame < 0 || frame >= len(c.Frames) {
				continue
			}
			f := &c.Frames[frame]
			if section == "ARGS" {
				f.ArgList = append(f.ArgList, line)
			} else {
				f.LocalList = append(f.LocalList, line)
			}
			if section == "ARGS" {
				if f.Args == nil {
					f.Args = map[string]string{}
				}
				f.Args[m[1]] = m[2]
			} else if _, dup := f.Locals[m[1]]; !dup { // innermost block first, as gdb lists them
				if f.Locals == nil {
					f.Locals = map[string]string{}
				}
				f.Locals[m[1]] = m[2]
			}
		case "DEREF":
			if _, v, ok := strings.Cut(line, " = "); ok && strings.HasPrefix(v, "{") {
				for _, kv := range splitTop(strings.TrimSuffix(strings.TrimPrefix(v, "{"), "}")) {
					if k, val, ok := strings.Cut(kv, " = "); ok {
						c.DerefFields[deref+"->"+strings.TrimSpace(k)] = val
					}
				}
			}
		case "MEMORY":
			if addr, rest, ok := strings.Cut(line, ":"); ok && strings.HasPrefix(addr, "0x") {
				c.MemoryAddr = strings.Fields(addr)[0]
				c.MemoryWords = strings.Fields(rest)
			}
		}
	}
}

// splitTop splits "a = 1, b = {c = 2, d = 3}" at top-level commas.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '{', '[', '(':
			depth++
		case '}', ']', ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// TestDebugClientLocalsAsGDB: the Arguments and Locals scopes list exactly
// what gdb's info args and info locals list, in order, through Microsoft's
// DebugClient: the inlined frame of a C++ -O2 worker thread built and
// crashed here (i and w of its loop, optimized away, are listed as
// <optimized out> from the abstract instance, as gdb does), and the frame
// of a failed assert, whose __PRETTY_FUNCTION__ (a char array) shows as the
// string gdb prints.
func TestDebugClientLocalsAsGDB(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary, runs gdb and node")
	}
	gdb := lookTool(t, "gdb", "gdb (apt-get install gdb)")
	tmp := t.TempDir()
	w := crashbuild.BuildWorker(t, filepath.Join(tmp, "worker"))
	native, _ := filepath.Abs(filepath.Join("..", "testdata", "native"))
	cases := []conformanceCase{
		{Name: "worker", Core: w.Core, Program: w.Exe, Workspace: w.Dir, ExactFrames: []int{0, 1}},
		{Name: "assert_abort", Core: filepath.Join(native, "cores", "assert_abort.core.gz"),
			Program: filepath.Join(native, "bin", "assert_abort"), Workspace: native},
	}
	for i := range cases {
		gdbExpect(t, gdb, &cases[i], tmp)
	}
	if f := cases[0].Frames[0]; f.Function != "total" || len(f.LocalList) < 6 {
		t.Fatalf("gdb's frame #0 of the worker: %+v; want total with 6 locals", f)
	}
	for i, f := range cases[1].Frames {
		if f.Function == "buffer_append" {
			cases[1].ExactFrames, cases[1].Culprit = []int{i}, i
		}
	}
	if len(cases[1].ExactFrames) == 0 || !slices.Contains(cases[1].Frames[cases[1].Culprit].LocalList, `__PRETTY_FUNCTION__ = "buffer_append"`) {
		t.Fatalf("gdb's frames of assert_abort: %+v", cases[1].Frames)
	}
	runDebugClient(t, tmp, cases)
}
