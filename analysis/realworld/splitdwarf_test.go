package realworld_test

import (
	"debug/dwarf"
	"debug/elf"
	"os/exec"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/model"
)

// splitShape is one way of building a program with split DWARF.
type splitShape struct {
	name, compiler, dwarf string
	// packer makes a .dwp beside the binary from its .dwo files ("" keeps
	// the .dwo files): binutils' dwp reads DWARF 4 only, llvm-dwp both.
	packer string
	// second links splitfirst.c before splitinline.c, so splitinline's
	// unit is the second: its DW_AT_GNU_addr_base and
	// DW_AT_GNU_ranges_base (DWARF 4), DW_AT_addr_base (DWARF 5) and its
	// contributions to a .dwp's sections are not 0.
	second bool
	// gdbDies: gdb 13 dies of SIGSEGV reading this build; it is held to
	// splitInlineChain only, the frames gdb prints for the other shapes.
	gdbDies bool
}

// buildSplit builds testdata/programs/splitinline.c the shape's way once
// per content (the .dwo files stay in the build's source directory, which
// is the units' DW_AT_comp_dir; a .dwp goes beside the binary, where gdb
// and faultline look for it, and the .dwo files are removed).
func buildSplit(t *testing.T, s splitShape) string {
	t.Helper()
	for _, tool := range []string{s.compiler, s.packer} {
		if _, err := exec.LookPath(tool); tool != "" && err != nil {
			t.Fatalf("%s is required (.ci/install.d/longtail.sh installs it): %v", tool, err)
		}
	}
	name := "splitinline-" + s.name
	sources := []string{"splitinline.c"}
	if s.second {
		sources = []string{"splitfirst.c", "splitinline.c"}
	}
	script := s.compiler + " -O2 -g " + s.dwarf + ` -gsplit-dwarf -o "$OUT" ` + strings.Join(sources, " ")
	if s.packer != "" {
		script += ` && ` + s.packer + ` -e "$OUT" -o ../` + name + `.dwp && rm -f *.dwo`
	}
	version, _ := exec.Command(s.compiler, "--version").Output()
	packer := ""
	if s.packer != "" {
		out, _ := exec.Command(s.packer, "--version").Output()
		packer = string(out)
	}
	return crashlab.BuildCached(t, crashlab.Recipe{Name: name, Command: []string{"sh", "-c", script},
		Sources: sources, Dir: programs, Extra: string(version) + packer})
}

// splitInlineChain is the crashing thread's top as gdb prints it for every
// shape: the NULL read in load_slot, inlined twice into tally.
var splitInlineChain = []string{
	"load_slot at splitinline.c:9",
	"sum_chain at splitinline.c:16",
	"tally at splitinline.c:22",
	"main at splitinline.c:30",
}

// TestSplitDWARFInlineFrames (issue 23 items 1 and 2): a NULL read three
// inlined calls deep, built with split DWARF by gcc and clang, DWARF 4 (GNU
// DebugFission: DW_AT_GNU_dwo_name, DW_FORM_GNU_addr_index and
// DW_FORM_GNU_str_index, DW_AT_ranges from the skeleton's
// DW_AT_GNU_ranges_base) and DWARF 5 (clang's DW_FORM_rnglistx ranges,
// offset pairs from the skeleton's DW_AT_low_pc), with .dwo files and
// packed into a .dwp. Each crashing thread equals gdb's frames with every
// inlined level. Before, every shape but gcc's DWARF 5 lost load_slot and
// sum_chain (tally at splitinline.c:9).
//
// gdb 13 is wrong on clang's DWARF 5 .dwp: it dies of SIGSEGV reading it
// ("Fatal signal: Segmentation fault"). That shape is held to the frames
// of the same build with its .dwo files, which gdb reads. (gcc's DWARF 5
// cannot be packed here: binutils' dwp reads DWARF 4 only and llvm-dwp 14
// spins on gcc's .dwo files.) With a unit before splitinline's
// (splitfirst.c), gdb dies on clang's DWARF 5 .dwo files too.
//
// The "-second" shapes put splitinline's unit second, as in any program of
// more than one file: its bases into the binary's .debug_addr and
// .debug_ranges are then not 0 (with one unit, reading the ranges from
// offset 0 of .debug_ranges instead of DW_AT_GNU_ranges_base went
// unnoticed), nor are its contributions to a .dwp's sections.
func TestSplitDWARFInlineFrames(t *testing.T) {
	shapes := []splitShape{
		{"gcc-dwarf4-dwo", "gcc", "-gdwarf-4", "", false, false},
		{"gcc-dwarf4-dwp", "gcc", "-gdwarf-4", "dwp", false, false},
		{"clang-dwarf4-dwo", "clang", "-gdwarf-4", "", false, false},
		{"clang-dwarf4-dwp", "clang", "-gdwarf-4", "llvm-dwp-14", false, false},
		{"gcc-dwarf5-dwo", "gcc", "-gdwarf-5", "", false, false},
		{"clang-dwarf5-dwo", "clang", "-gdwarf-5", "", false, false},
		{"clang-dwarf5-dwp", "clang", "-gdwarf-5", "llvm-dwp-14", false, true},
		{"gcc-dwarf4-dwo-second", "gcc", "-gdwarf-4", "", true, false},
		{"gcc-dwarf4-dwp-second", "gcc", "-gdwarf-4", "dwp", true, false},
		{"clang-dwarf4-dwo-second", "clang", "-gdwarf-4", "", true, false},
		{"clang-dwarf4-dwp-second", "clang", "-gdwarf-4", "llvm-dwp-14", true, false},
		{"gcc-dwarf5-dwo-second", "gcc", "-gdwarf-5", "", true, false},
		{"clang-dwarf5-dwo-second", "clang", "-gdwarf-5", "", true, true},
		{"clang-dwarf5-dwp-second", "clang", "-gdwarf-5", "llvm-dwp-14", true, true},
	}
	for _, s := range shapes {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			bin := buildSplit(t, s)
			if s.second {
				addrBase, rangesBase := skeletonBases(t, bin)
				if addrBase == 0 || (s.dwarf == "-gdwarf-4" && rangesBase == 0) {
					t.Fatalf("splitinline's unit is not second: addr base %#x, ranges base %#x", addrBase, rangesBase)
				}
			}
			core, _ := crashlab.Crash(t, t.TempDir(), "", bin)
			c, err := analysis.Open(core, analysis.Options{Exe: bin, Offline: true})
			if err != nil {
				t.Fatal(err)
			}
			th := c.CrashingThread()
			if th == nil {
				t.Fatal("no crashing thread")
			}
			got := crashlab.ModelLines(*th)
			if d := crashlab.Diff(splitInlineChain, got); d != "" {
				t.Errorf("frames:\n%s", d)
			}
			for _, p := range c.Problems {
				if strings.Contains(p.Message, "split DWARF") {
					t.Errorf("problem: %s", p.Message)
				}
			}
			if s.gdbDies {
				return // held to splitInlineChain above, gdb's frames for the other shapes
			}
			if d := crashlab.CompareWithGDB(crashlab.GDB(t, bin, core), c); d != "" {
				t.Errorf("frames differ from gdb:\n%s", d)
			}
			if c.Classification.Kind != model.KindNullDeref || culprit(c) != "load_slot" {
				t.Errorf("kind %s, culprit %q; want null-deref in load_slot", c.Classification.Kind, culprit(c))
			}
		})
	}
}

// skeletonBases returns the bases of splitinline's skeleton unit in bin:
// DW_AT_GNU_addr_base or DW_AT_addr_base, and DW_AT_GNU_ranges_base (0
// where the unit has none), read with Go's debug/dwarf.
func skeletonBases(t *testing.T, bin string) (addrBase, rangesBase int64) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			t.Fatalf("no skeleton unit for splitinline in %s (%v)", bin, err)
		}
		r.SkipChildren()
		name, _ := e.Val(dwarf.AttrName).(string)
		dwo, _ := e.Val(attrGNUDwoName).(string)
		if dwo == "" {
			dwo, _ = e.Val(dwarf.AttrDwoName).(string)
		}
		if !strings.HasSuffix(name, "splitinline.c") && !strings.HasSuffix(dwo, "splitinline.dwo") {
			continue
		}
		addrBase, _ = e.Val(attrGNUAddrBase).(int64)
		if v, ok := e.Val(dwarf.AttrAddrBase).(int64); ok {
			addrBase = v
		}
		rangesBase, _ = e.Val(attrGNURangesBase).(int64)
		return addrBase, rangesBase
	}
}

// The GNU DebugFission attributes (DWARF 4 skeletons), as gdb's
// include/dwarf2.def numbers them.
const (
	attrGNUDwoName    dwarf.Attr = 0x2130
	attrGNURangesBase dwarf.Attr = 0x2132
	attrGNUAddrBase   dwarf.Attr = 0x2133
)
