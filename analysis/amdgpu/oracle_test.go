package amdgpu

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
)

// The oracle is LLVM 14 from Debian (.ci/install.d/amdgpu.sh installs it):
// llvm-symbolizer --inlining gives the chain at each address.
const symbolizerTool = "llvm-symbolizer-14"

const testdataDir = "../../testdata/amdgpu"

func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found: install it with .ci/install.d/amdgpu.sh (apt-get install llvm-14 clang-tools-14)", name)
	}
	return p
}

// codeAddrs lists every 4-byte step of every function of the code object:
// AMDGPU instructions are 4 or 8 bytes long, so this covers every
// instruction address (llvm-objdump 14 cannot disassemble gfx942 or
// gfx1100, so it cannot list them).
func codeAddrs(c *CodeObject) []uint64 {
	var addrs []uint64
	for _, f := range c.Functions() {
		for a := f.Addr; a < f.Addr+f.Size; a += 4 {
			addrs = append(addrs, a)
		}
	}
	return addrs
}

type symbolizerFrame struct {
	FunctionName string
	FileName     string
	Line, Column int
}

// llvmSymbolize runs llvm-symbolizer --inlining over addrs, with linkage
// names, so that names compare after one demangling rule.
func llvmSymbolize(t *testing.T, path string, addrs []uint64) [][]symbolizerFrame {
	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "%#x\n", a)
	}
	cmd := exec.Command(needTool(t, symbolizerTool), "--inlining", "--output-style=JSON",
		"--functions=linkage", "--no-demangle", "--obj="+path)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v", symbolizerTool, path, err)
	}
	var res [][]symbolizerFrame
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r struct{ Symbol []symbolizerFrame }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s output %q: %v", symbolizerTool, sc.Text(), err)
		}
		var chain []symbolizerFrame
		for _, f := range r.Symbol {
			if f.FunctionName != "??" && f.FunctionName != "" {
				chain = append(chain, f)
			}
		}
		res = append(res, chain)
	}
	if len(res) != len(addrs) {
		t.Fatalf("%s: %d answers for %d addresses", symbolizerTool, len(res), len(addrs))
	}
	return res
}

// compareWithSymbolizer checks the chain at every instruction of the code
// object at path and returns how many addresses and frames it compared.
func compareWithSymbolizer(t *testing.T, path string, c *CodeObject) (addrs, frames int) {
	t.Helper()
	list := codeAddrs(c)
	if len(list) == 0 {
		t.Fatalf("%s: no code", path)
	}
	want := llvmSymbolize(t, path, list)
	mismatches := 0
	for i, a := range list {
		got := []Frame{}
		if loc, err := c.Lookup(a); err == nil {
			got = loc.Frames
		}
		if d := chainDiff(got, want[i]); d != "" {
			mismatches++
			if mismatches <= 10 {
				t.Errorf("%s %#x: %s", filepath.Base(path), a, d)
			}
		}
		frames += len(want[i])
	}
	if mismatches > 0 {
		t.Errorf("%s: %d of %d addresses differ from %s", filepath.Base(path), mismatches, len(list), symbolizerTool)
	}
	return len(list), frames
}

func chainDiff(got []Frame, want []symbolizerFrame) string {
	describe := func() string {
		var g, w []string
		for _, f := range got {
			g = append(g, fmt.Sprintf("%s %s:%d:%d", f.Function, f.File, f.Line, f.Column))
		}
		for _, f := range want {
			w = append(w, fmt.Sprintf("%s %s:%d:%d", demangleName(f.FunctionName), f.FileName, f.Line, f.Column))
		}
		return fmt.Sprintf("got %q, llvm-symbolizer %q", g, w)
	}
	if len(got) != len(want) {
		return describe()
	}
	for k := range got {
		w := want[k]
		if got[k].Function != demangleName(w.FunctionName) || filepath.Clean(got[k].File) != filepath.Clean(w.FileName) ||
			got[k].Line != w.Line || got[k].Column != w.Column {
			return describe()
		}
	}
	return ""
}

// TestChainsEqualLLVMSymbolizer compares every instruction address of every
// code object in testdata/amdgpu — standalone, inside the plain and the
// compressed bundle, and inside the host library's .hip_fatbin — with
// llvm-symbolizer --inlining.
func TestChainsEqualLLVMSymbolizer(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testdataDir, "co", "*.co"))
	for _, f := range []string{"bundles/scatter.hipfb", "bundles/scatter.ccob", "host/libkernels.so"} {
		files = append(files, filepath.Join(testdataDir, f))
	}
	sort.Strings(files)
	tmp := t.TempDir()
	totalAddrs, totalFrames, objects, deepest := 0, 0, 0, 0
	for _, file := range files {
		cos, problems, err := OpenFile(file)
		if err != nil || len(problems) > 0 {
			t.Fatalf("%s: %v %v", file, err, problems)
		}
		for k, c := range cos {
			path := file
			if c.Where != "code object" {
				// The symbolizer reads files: give it the extracted bytes.
				path = filepath.Join(tmp, fmt.Sprintf("%s.%d.%s.co", filepath.Base(file), k, c.Processor()))
				if err := os.WriteFile(path, c.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			n, fr := compareWithSymbolizer(t, path, c)
			totalAddrs, totalFrames, objects = totalAddrs+n, totalFrames+fr, objects+1
			deepest = max(deepest, deepestChain(c))
		}
	}
	t.Logf("%d code objects, %d instruction addresses, %d frames compared with %s; deepest chain %d levels",
		objects, totalAddrs, totalFrames, symbolizerTool, deepest)
	if objects < 16 || deepest < 4 {
		t.Errorf("want >= 16 code objects and a chain of >= 4 levels, got %d and %d", objects, deepest)
	}
}

func deepestChain(c *CodeObject) int {
	d := 0
	for _, a := range codeAddrs(c) {
		if loc, err := c.Lookup(a); err == nil {
			d = max(d, len(loc.Frames))
		}
	}
	return d
}
