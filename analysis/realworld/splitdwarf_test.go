package realworld_test

import (
	"debug/dwarf"
	"debug/elf"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/debuginfo/variables"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/logs"
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
// inlined level, and the frames' argument and local values are read from
// the split unit's location lists (no error value; arguments as gdb prints
// them, see compareSplitArgs). Before, every shape but gcc's DWARF 5 lost
// load_slot and sum_chain (tally at splitinline.c:9), and every value with
// a location list was an error.
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
			sess, err := analysis.OpenSession(core, analysis.Options{Exe: bin, Offline: true})
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			c := sess.Crash
			th := c.CrashingThread()
			if th == nil {
				t.Fatal("no crashing thread")
			}
			got := crashlab.ModelLines(*th)
			noValueErrors(t, sess, th.ID, len(splitInlineChain))
			splitArgValues(t, sess, th.ID)
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
			gdb := crashlab.GDB(t, bin, core)
			if d := crashlab.CompareWithGDB(gdb, c); d != "" {
				t.Errorf("frames differ from gdb:\n%s", d)
			}
			if len(gdb.Threads) == 1 {
				compareSplitArgs(t, sess, th.ID, gdb.Threads[0].Frames, s.compiler == "clang" && s.dwarf == "-gdwarf-5")
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

// noValueErrors fails on any argument or local of the top n frames whose
// value is an error: a split unit's location lists are in its
// .debug_loc.dwo or .debug_loclists.dwo (or their .dwp contributions),
// read with the skeleton's DW_AT_GNU_addr_base; before, every list was
// looked for in the .dwo's missing .debug_loc ("location list offset 0xec
// past the section" in the DAP Variables, the hover and the inlay hints).
func noValueErrors(t *testing.T, s *analysis.Session, thread, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		vals, err := s.FrameValues(thread, i)
		if err != nil {
			t.Errorf("frame %d: %v", i, err)
		}
		for _, v := range vals {
			if strings.HasPrefix(v.Text, "<error") {
				t.Errorf("frame %d: %s = %s", i, v.Name, v.Text)
			}
		}
	}
}

// compareSplitArgs compares each frame's arguments with those gdb printed
// in its backtrace ("n=n@entry=3" is n = 3; "s@entry=…" entries are gdb's
// entry values, not arguments). An argument faultline leaves optimized out
// for want of DW_OP_entry_value support, where gdb prints the value from
// the caller's call site, is logged, as in TestFrameValuesMatchGDB.
//
// gdbMissesLoclists: gdb 13 prints <optimized out> for every argument of
// clang's DWARF 5 split units whose location is a list (DW_FORM_loclistx;
// its lists start with DW_LLE_base_addressx, which gdb 13 reads wrong),
// where llvm-dwarfdump-14 shows, e.g., sum_chain's n in RSI over the
// crash pc. There faultline's value is logged; splitArgValues checks it.
func compareSplitArgs(t *testing.T, s *analysis.Session, thread int, frames []logs.GDBFrame, gdbMissesLoclists bool) {
	t.Helper()
	compared := 0
	for i, gf := range frames {
		if gf.Function != "main" && !slices.Contains([]string{"load_slot", "sum_chain", "tally"}, gf.Function) {
			continue
		}
		vals, _ := s.FrameValues(thread, i)
		got := map[string]variables.Value{}
		for _, v := range vals {
			if v.Argument {
				got[v.Name] = v
			}
		}
		for _, kv := range strings.Split(gf.Args, ", ") {
			name, want, _ := strings.Cut(kv, "=")
			if strings.Contains(name, "@entry") {
				continue
			}
			want = strings.TrimPrefix(want, name+"@entry=")
			v, ok := got[name]
			switch {
			case !ok:
				t.Errorf("frame %d %s: gdb has argument %s = %s, faultline has none", i, gf.Function, name, want)
			case v.Text == want:
				compared++
			case gdbMissesLoclists && want == "<optimized out>":
				t.Logf("frame %d %s: %s = %s; gdb 13 <optimized out>", i, gf.Function, name, v.Text)
			case v.EntryValue && v.Text == "<optimized out>":
				t.Logf("frame %d %s: %s: gdb %s from the caller's entry value; faultline %s", i, gf.Function, name, want, v.Text)
			default:
				t.Errorf("frame %d %s: %s = %s, gdb says %s", i, gf.Function, name, v.Text, want)
			}
		}
	}
	if compared < 1 {
		t.Errorf("only %d arguments compared with gdb's", compared)
	}
}

// splitArgValues checks the arguments faultline prints against the
// program: n is 3 in sum_chain and tally, and load_slot's s is &s[2] of
// sum_chain's s (a 16-byte struct slot apart twice), wherever both are
// printed. At least tally's n must be.
func splitArgValues(t *testing.T, s *analysis.Session, thread int) {
	t.Helper()
	args := map[string]string{} // "frame.name" -> text
	for i, fn := range []string{"load_slot", "sum_chain", "tally"} {
		vals, _ := s.FrameValues(thread, i)
		for _, v := range vals {
			if v.Argument {
				args[fn+"."+v.Name] = v.Text
			}
		}
	}
	if args["tally.n"] != "3" {
		t.Errorf("tally's n = %q, want 3", args["tally.n"])
	}
	if n, ok := args["sum_chain.n"]; ok && n != "3" && n != "<optimized out>" {
		t.Errorf("sum_chain's n = %q, want 3", n)
	}
	inner, err1 := strconv.ParseUint(args["load_slot.s"], 0, 64)
	outer, err2 := strconv.ParseUint(args["sum_chain.s"], 0, 64)
	if err1 == nil && err2 == nil && inner != outer+0x20 {
		t.Errorf("load_slot's s = %#x, sum_chain's s = %#x: want &s[2], %#x", inner, outer, outer+0x20)
	}
}
