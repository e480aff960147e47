package cuda_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis/cuda"
)

// sourceLines reads testdata/cuda/src/NAME (the cubins record the build
// machine's absolute paths; the base name finds the checked-in copy).
func sourceLines(t *testing.T, cache map[string][]string, file string) []string {
	base := filepath.Base(file)
	if ls, ok := cache[base]; ok {
		return ls
	}
	f, err := os.Open(filepath.Join(testdataDir, "src", base))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ls []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		ls = append(ls, sc.Text())
	}
	cache[base] = ls
	return ls
}

// calleeName is the name a call site spells: "fl::Gather<fl::Scale>::operator()"
// has none (it is called as g(i)), "fl::load_global<float>" is load_global.
func calleeName(function string) string {
	if strings.Contains(function, "operator") {
		return ""
	}
	if i := strings.IndexByte(function, '<'); i >= 0 {
		function = function[:i]
	}
	if i := strings.LastIndex(function, "::"); i >= 0 {
		function = function[i+2:]
	}
	return function
}

// knownBadLineTables are the sequences whose rows ptxas 11.8 wrote with a
// stale file register (sm_90, the entry of combine: rows after the
// inlined access.cuh rows keep file access.cuh where rdc_b.cu is meant).
// The table is the only record of these lines, so faultline (like nvdisasm
// and eu-readelf) shows it as written; this test just keeps the list exact.
var knownBadLineTables = map[string]bool{
	"rdc_b.sm_90.cubin .text._Z7combinePKfPKilf":      true,
	"rdc_linked.sm_90.cubin .text._Z7combinePKfPKilf": true,
}

// TestCallSitesNameTheirCallee is an oracle independent of nvdisasm: at
// every instruction of every reference cubin, each inlined level's call
// site (the next outer frame's source line) must spell the inlined
// function's name.
func TestCallSitesNameTheirCallee(t *testing.T) {
	src := map[string][]string{}
	for _, path := range referenceCubins(t) {
		c, err := cuda.OpenCubin(path)
		if err != nil {
			t.Fatal(err)
		}
		ref := readNvdisasm(t, path)
		bad := map[string]bool{}
		checked := 0
		for _, sec := range ref.Sections {
			for _, in := range sec.Instructions {
				loc, err := c.Resolve(fmt.Sprintf("%s+%#x", sec.Name, in.Address))
				if err != nil {
					t.Fatal(err)
				}
				for k := 1; k < len(loc.Frames); k++ {
					callee := calleeName(loc.Frames[k-1].Function)
					if callee == "" {
						continue
					}
					site := loc.Frames[k]
					ls := sourceLines(t, src, site.File)
					checked++
					if site.Line < 1 || site.Line > len(ls) || !strings.Contains(ls[site.Line-1], callee+"(") &&
						!strings.Contains(ls[site.Line-1], callee+"<") {
						key := filepath.Base(path) + " " + sec.Name
						if !knownBadLineTables[key] {
							t.Errorf("%s+%#x: %s is called at %s:%d, which does not call it", sec.Name, in.Address,
								callee, filepath.Base(site.File), site.Line)
						}
						bad[key] = true
					}
				}
			}
		}
		for key := range knownBadLineTables {
			if strings.HasPrefix(key, filepath.Base(path)+" ") && !bad[key] {
				t.Errorf("%s: listed as a bad line table but all its call sites check out", key)
			}
		}
		if checked == 0 && !strings.HasPrefix(filepath.Base(path), "rdc_a") {
			t.Errorf("%s: no inlined call sites checked", filepath.Base(path))
		}
	}
}

// TestNameBaseRepair checks the second unit's function names in the sm_90
// link, where nvlink left the .debug_str base at 0: the names must be the
// functions the source defines, not suffixes of the first unit's strings.
func TestNameBaseRepair(t *testing.T) {
	for _, name := range []string{"rdc_linked.sm_80.cubin", "rdc_linked.sm_90.cubin"} {
		c, err := cuda.OpenCubin(filepath.Join(testdataDir, "cubins", name))
		if err != nil {
			t.Fatal(err)
		}
		loc, err := c.Resolve("rdc_other_kernel+0x130")
		if err != nil {
			t.Fatal(err)
		}
		var fns []string
		for _, f := range loc.Frames {
			fns = append(fns, f.Function)
		}
		got := strings.Join(fns, " <- ")
		// sm_80 and sm_90 schedule differently; both are in Scale or
		// Gather inside apply_gather inside the kernel.
		if !strings.HasSuffix(got, "apply_gather<fl::Scale> <- rdc_other_kernel") {
			t.Errorf("%s rdc_other_kernel+0x130: functions %s", name, got)
		}
		repaired := false
		for _, p := range c.Problems {
			repaired = repaired || strings.Contains(p, "repaired")
		}
		if want := strings.Contains(name, "sm_90"); repaired != want {
			t.Errorf("%s: base repaired %v, want %v (problems %q)", name, repaired, want, c.Problems)
		}
	}
}
