package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/faultline-dev/faultline/internal/testgz"
	"github.com/faultline-dev/faultline/server"
)

// fileLine is a source position as a tool prints it: base name and line.
type fileLine struct {
	file string
	line int
}

func (f fileLine) String() string { return fmt.Sprintf("%s:%d", f.file, f.line) }

// nvdisasmChain reads the inline chain of the instruction at offset in
// kernel from `nvdisasm -gi` output (testdata/cuda/ref, made by NVIDIA's
// nvdisasm): the "//## File" lines before the instruction, innermost first.
func nvdisasmChain(t *testing.T, ref, kernel, offset string) []fileLine {
	t.Helper()
	zr := testgz.Open(t, ref)
	fileRE := regexp.MustCompile(`^\s*//## File "([^"]+)", line (\d+)`)
	var chain []fileLine
	in, closed := false, true
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, ".text."+kernel+":"):
			in = true
		case !in:
		case strings.Contains(l, "/*"+offset+"*/"):
			return chain
		case fileRE.MatchString(l):
			// A group of annotations is the inline chain, innermost
			// first; its last line (the function's own) has no "inlined at".
			if closed {
				chain, closed = nil, false
			}
			m := fileRE.FindStringSubmatch(l)
			n, _ := strconv.Atoi(m[2])
			chain = append(chain, fileLine{filepath.Base(m[1]), n})
			closed = !strings.Contains(l, " inlined at ")
		}
	}
	t.Fatalf("no instruction %s in %s of %s", offset, kernel, ref)
	return nil
}

// diagnosticsByPosition gathers the diagnostics of uris by "base:line" (1-based).
func diagnosticsByPosition(e *Env, uris []uri.URI) map[string][]protocol.Diagnostic {
	out := map[string][]protocol.Diagnostic{}
	for _, u := range uris {
		for _, d := range e.Diagnostics(u) {
			k := fileLine{filepath.Base(u.FsPath()), int(d.Range.Start.Line) + 1}.String()
			out[k] = append(out[k], d)
		}
	}
	return out
}

func cudaDir(t *testing.T) string {
	dir, err := filepath.Abs(filepath.Join("..", "testdata", "cuda"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestGPUCoreInlineLevels opens the GPU core dump (Warp Illegal Address at
// crash_kernel+0xc0) and checks an Error diagnostic, a lens and a hover at
// every level of the faulting instruction's inline chain, against the
// chain NVIDIA's nvdisasm -gi prints for that instruction.
func TestGPUCoreInlineLevels(t *testing.T) {
	dir := cudaDir(t)
	want := nvdisasmChain(t, filepath.Join(dir, "ref", "kernels.sm_80.nvdisasm.txt.gz"), "crash_kernel", "00c0")
	if len(want) != 5 {
		t.Fatalf("nvdisasm's chain at crash_kernel+0xc0 = %v, want 5 levels", want)
	}
	e := newEnvIn(t, dir, map[string]any{"cacheDir": t.TempDir(), "offline": true}, server.Options{})
	var sum server.OpenSummary
	if err := e.Execute(server.CommandOpen, map[string]string{"dump": "cores/illegal_address.sm_80.nvcudmp.gz"}, &sum); err != nil {
		t.Fatal(err)
	}
	access := uri.File(filepath.Join(dir, "src", "access.cuh"))
	functors := uri.File(filepath.Join(dir, "src", "functors.cuh"))
	kernels := uri.File(filepath.Join(dir, "src", "kernels.cu"))
	if sum.Format != "cuda-core" || sum.Kernel != "crash_kernel" || sum.Frame != -1 || sum.URI != string(access) ||
		fmt.Sprintf("%s:%d", filepath.Base(sum.File), sum.Line) != want[0].String() ||
		!strings.HasPrefix(sum.Summary, "GPU Warp Illegal Address in kernel crash_kernel") {
		t.Fatalf("open summary = %+v", sum)
	}

	e.Await("diagnostics at the 5 inline levels", func(c *fakeClient) bool {
		return len(c.diags[access]) == 1 && len(c.diags[functors]) == 2 && len(c.diags[kernels]) == 2
	})
	got := diagnosticsByPosition(e, []uri.URI{access, functors, kernels})
	for k, w := range want {
		ds := got[w.String()]
		if len(ds) != 1 {
			t.Errorf("level %d (%s): %d diagnostics", k+1, w, len(ds))
			continue
		}
		d := ds[0]
		title := fmt.Sprintf("inline level %d of 5 in crash_kernel", k+1)
		if d.Severity != protocol.DiagnosticSeverityError || d.Code != protocol.String("gpu-fault") ||
			!strings.HasSuffix(message(d), " — "+title) {
			t.Errorf("level %d (%s): %v %v %q", k+1, w, d.Severity, d.Code, message(d))
		}
		if k == 0 && !strings.HasPrefix(message(d), "GPU Warp Illegal Address in kernel crash_kernel") {
			t.Errorf("innermost level's message %q does not start with the classification's summary", message(d))
		}
		if k > 0 && !strings.Contains(message(d), "in fl::load_global<int>, inlined here into ") {
			t.Errorf("level %d's message %q", k+1, message(d))
		}
		// The whole chain, innermost first, as related information.
		var chain []string
		for _, ri := range d.RelatedInformation {
			chain = append(chain, fileLine{filepath.Base(ri.Location.URI.FsPath()), int(ri.Location.Range.Start.Line) + 1}.String())
		}
		if fmt.Sprint(chain) != fmt.Sprint(want) {
			t.Errorf("level %d related chain %v, nvdisasm says %v", k+1, chain, want)
		}
	}

	checkDiagnosticsGolden(t, e, "gpu_core.diagnostics.json", dir, []uri.URI{access, functors, kernels})

	// A lens per level; clicking walks outward to the enclosing level.
	titles := map[string]string{}
	for _, u := range []uri.URI{access, functors, kernels} {
		ls, err := e.Server.CodeLens(e.ctx, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: u}})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range ls {
			titles[fileLine{filepath.Base(u.FsPath()), int(l.Range.Start.Line) + 1}.String()] = l.Command.Title
			if l.Range.Start.Line == uint32(want[0].line-1) && u == access {
				var arg map[string]int
				json.Unmarshal(l.Command.Arguments[0], &arg)
				if err := e.Execute(l.Command.Command, arg, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for k, w := range want {
		if got, wantTitle := titles[w.String()], fmt.Sprintf("inline level %d of 5 in crash_kernel", k+1); got != wantTitle {
			t.Errorf("lens at %s = %q, want %q", w, got, wantTitle)
		}
	}
	e.Await("the innermost lens shows level 2", func(c *fakeClient) bool {
		n := len(c.shown)
		return n > 0 && c.shown[n-1].URI == functors && c.shown[n-1].Selection.Start.Line == uint32(want[1].line-1)
	})

	// Hover on the faulting access.
	h, err := e.Server.Hover(e.ctx, &protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: access}, Position: protocol.Position{Line: uint32(want[0].line - 1)}}})
	if err != nil {
		t.Fatal(err)
	}
	md := hoverText(h)
	for _, s := range []string{"**GPU Warp Illegal Address**", "inline level 1 of 5 in `crash_kernel`",
		"NVIDIA A100-SXM4-80GB (sm_80)", "block (2,0,0) thread (101,0,0)", "SM 17 warp 3 lane 5",
		"`.text.crash_kernel+0xc0`", "1. `fl::load_global<int>`", "← this line", "5. `crash_kernel`",
		"**Classification** · `gpu-illegal-address`", "Evidence:"} {
		if !strings.Contains(md, s) {
			t.Errorf("hover lacks %q:\n%s", s, md)
		}
	}

	// faultline/threads carries the chain for tree views.
	threads, b := requestThreads(t, e)
	if threads.GPU == nil || threads.GPU.Kernel != "crash_kernel" || len(threads.GPU.Frames) != 5 ||
		threads.GPU.Frames[0].URI != string(access) || !threads.GPU.Frames[0].Culprit {
		t.Errorf("faultline/threads = %s", b)
	}
	// Requests that walk host threads answer empty, not fail.
	if syms, err := e.Server.Symbols(e.ctx, &protocol.WorkspaceSymbolParams{}); err != nil {
		t.Errorf("symbols on a GPU-only crash: %v %v", syms, err)
	}
	if err := e.Shutdown(); err != nil {
		t.Error(err)
	}
}

// TestGPUSanitizerLog opens a compute-sanitizer report through the same
// path: a diagnostic at each device frame the report lists, at the lines
// it prints, resolved into the workspace by path suffix.
func TestGPUSanitizerLog(t *testing.T) {
	dir := cudaDir(t)
	log, err := filepath.Abs(filepath.Join("..", "analysis", "logs", "testdata", "gpu", "memcheck.txt"))
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	// The device frames as compute-sanitizer printed them, innermost first.
	var want []fileLine
	for _, m := range regexp.MustCompile(`(?m)^=========\s+(?:at |Device Frame:).* in (\S+):(\d+)$`).FindAllStringSubmatch(string(text), -1) {
		n, _ := strconv.Atoi(m[2])
		want = append(want, fileLine{filepath.Base(m[1]), n})
	}
	if len(want) != 4 {
		t.Fatalf("memcheck.txt lists %v", want)
	}
	e := newEnvIn(t, dir, map[string]any{"offline": true}, server.Options{})
	var sum server.OpenSummary
	if err := e.Execute(server.CommandOpen, map[string]string{"dump": log}, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Format != "compute-sanitizer" || sum.Kernel != "crash_kernel" || sum.Frame != -1 {
		t.Errorf("open summary = %+v", sum)
	}
	uris := []uri.URI{uri.File(filepath.Join(dir, "src", "access.cuh")), uri.File(filepath.Join(dir, "src", "functors.cuh")),
		uri.File(filepath.Join(dir, "src", "kernels.cu"))}
	e.Await("diagnostics at the 4 device frames", func(c *fakeClient) bool {
		n := 0
		for _, u := range uris {
			n += len(c.diags[u])
		}
		return n == 4
	})
	got := diagnosticsByPosition(e, uris)
	for k, w := range want {
		ds := got[w.String()]
		if len(ds) != 1 || ds[0].Severity != protocol.DiagnosticSeverityError ||
			!strings.HasSuffix(message(ds[0]), fmt.Sprintf("inline level %d of 4 in crash_kernel", k+1)) {
			t.Errorf("level %d at %s: %+v", k+1, w, ds)
		}
	}
	if d := got[want[0].String()]; len(d) == 1 && !strings.HasPrefix(message(d[0]), "GPU Illegal Address: Invalid __global__ read of size 4 bytes") {
		t.Errorf("innermost message %q", message(d[0]))
	}
	if err := e.Shutdown(); err != nil {
		t.Error(err)
	}
}

// TestGPULevelWithoutSourceOpensItsDocument: a compute-sanitizer report
// whose device frames name files not on this machine (its paths moved to
// /nonexistent-build): faultline.gotoFrame {"level": k} answers with the
// level's read-only frame document (it failed with RequestFailed -32803),
// whose text names the level's function and file:line, and
// faultline/threads gives each GPU level its docUri.
func TestGPULevelWithoutSourceOpensItsDocument(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "analysis", "logs", "testdata", "gpu", "memcheck.txt"))
	if err != nil {
		t.Fatal(err)
	}
	moved := regexp.MustCompile(` in /\S*/src/`).ReplaceAll(text, []byte(" in /nonexistent-build/src/"))
	if !strings.Contains(string(moved), "/nonexistent-build/src/access.cuh:") {
		t.Fatalf("memcheck.txt's frames: no path was moved:\n%s", moved)
	}
	log := filepath.Join(t.TempDir(), "memcheck.txt")
	if err := os.WriteFile(log, moved, 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnvIn(t, t.TempDir(), map[string]any{"offline": true}, server.Options{})
	var sum server.OpenSummary
	if err := e.Execute(server.CommandOpen, map[string]string{"dump": log}, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.URI != "" || len(sum.Unresolved) == 0 {
		t.Fatalf("open summary = %+v; want the kernel's sources unresolved", sum)
	}
	threads, b := requestThreads(t, e)
	if threads.GPU == nil || len(threads.GPU.Frames) != 4 {
		t.Fatalf("faultline/threads = %s", b)
	}
	for k, f := range threads.GPU.Frames {
		if f.URI != "" || !strings.HasPrefix(f.DocURI, server.FrameScheme+":") {
			t.Errorf("GPU level %d: uri %q, docUri %q", k+1, f.URI, f.DocURI)
		}
	}
	for _, k := range []int{1, 3} {
		var loc struct {
			URI      string `json:"uri"`
			Line     int    `json:"line"`
			Document bool   `json:"document"`
		}
		if err := e.Execute(server.CommandGotoFrame, map[string]int{"level": k}, &loc); err != nil {
			t.Fatalf("gotoFrame level %d: %v", k, err)
		}
		f := threads.GPU.Frames[k-1]
		if !loc.Document || loc.URI != f.DocURI {
			t.Errorf("gotoFrame level %d = %+v; want the document %s", k, loc, f.DocURI)
		}
		doc, err := e.frameDoc(loc.URI)
		want := fmt.Sprintf("%s:%d (not found on this machine)", f.File, f.Line)
		if err != nil || !strings.Contains(doc.Text, want) || !strings.Contains(doc.Text, f.Function) {
			t.Errorf("level %d's document: %v\n%s\nwant %q and %q", k, err, doc.Text, want, f.Function)
		}
	}
}
