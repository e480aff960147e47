package symbolize

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfreader"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// tailcallBuilds compile testdata/src/tailcall.c (gcc -O2: main calls
// enter, which tail-calls relay_a — or, with -DAMBIGUOUS, relay_a or
// relay_b — which tail-call merge, which tail-calls work, which calls
// fault) with DWARF 5 call sites and with DWARF 4's GNU extension.
var tailcallBuilds = []struct {
	name string
	args []string
	// tail lists the functions gdb's bt must show as tail-call frames.
	tail []string
}{
	{"dwarf5", []string{"-O2", "-g", "tailcall.c"}, []string{"merge", "relay_a", "enter"}},
	{"dwarf4", []string{"-O2", "-gdwarf-4", "tailcall.c"}, []string{"merge", "relay_a", "enter"}},
	{"dwarf5-ambiguous", []string{"-O2", "-g", "-DAMBIGUOUS", "tailcall.c"}, []string{"merge"}},
	{"dwarf4-ambiguous", []string{"-O2", "-gdwarf-4", "-DAMBIGUOUS", "tailcall.c"}, []string{"merge"}},
}

// readelfCallSite is one call site as binutils' readelf prints it.
type readelfCallSite struct {
	returnPC uint64
	tail     bool
	callee   string // DW_AT_name of the DIE DW_AT_call_origin refers to
}

var (
	readelfDIE  = regexp.MustCompile(`^\s*<(\d+)><([0-9a-f]+)>: Abbrev Number: \d+ \((DW_TAG_\w+)\)`)
	readelfAttr = regexp.MustCompile(`^\s*<[0-9a-f]+>\s+(DW_AT_\w+)\s*:\s*(.*)$`)
)

// readelfCallSites lists the call sites of a file from readelf --debug-dump=info.
func readelfCallSites(t *testing.T, path string) []readelfCallSite {
	t.Helper()
	out, err := exec.Command("readelf", "--debug-dump=info", path).Output()
	if err != nil {
		t.Fatalf("readelf: %v", err)
	}
	names := map[uint64]string{}
	type raw struct {
		readelfCallSite
		origin uint64
	}
	var sites []*raw
	var cur *raw
	var off uint64
	for _, l := range strings.Split(string(out), "\n") {
		if m := readelfDIE.FindStringSubmatch(l); m != nil {
			off, _ = strconv.ParseUint(m[2], 16, 64)
			cur = nil
			if m[3] == "DW_TAG_call_site" || m[3] == "DW_TAG_GNU_call_site" {
				cur = &raw{}
				sites = append(sites, cur)
			}
			continue
		}
		m := readelfAttr.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		val := strings.TrimSpace(m[2])
		switch m[1] {
		case "DW_AT_name":
			if i := strings.LastIndex(val, "): "); i >= 0 {
				val = val[i+3:]
			}
			names[off] = val
		case "DW_AT_call_return_pc", "DW_AT_low_pc":
			if cur != nil {
				cur.returnPC, _ = strconv.ParseUint(strings.TrimPrefix(val, "0x"), 16, 64)
			}
		case "DW_AT_call_tail_call", "DW_AT_GNU_tail_call":
			if cur != nil {
				cur.tail = val == "1"
			}
		case "DW_AT_call_origin", "DW_AT_abstract_origin":
			if cur != nil {
				cur.origin, _ = strconv.ParseUint(strings.TrimPrefix(strings.Trim(val, "<>"), "0x"), 16, 64)
			}
		}
	}
	var res []readelfCallSite
	for _, s := range sites {
		s.callee = names[s.origin]
		res = append(res, s.readelfCallSite)
	}
	return res
}

// TestCallSitesMatchReadelf: every call site of the program (return pc,
// tail-call flag, callee), DWARF 5 and DWARF 4, as readelf prints them,
// with the callee resolved to its function's address in the symbol table.
func TestCallSitesMatchReadelf(t *testing.T) {
	requireTools(t, "gcc", "readelf")
	for _, b := range tailcallBuilds {
		t.Run(b.name, func(t *testing.T) {
			prog := compile(t, "gcc", t.TempDir(), "prog", b.args...)
			want := readelfCallSites(t, prog)
			if len(want) < 4 {
				t.Fatalf("readelf lists %d call sites, want the program's", len(want))
			}
			ef, err := elf.Open(prog)
			if err != nil {
				t.Fatal(err)
			}
			elfSyms, _ := ef.Symbols()
			ef.Close()
			addrOf := map[string]uint64{}
			for _, s := range elfSyms {
				if elf.ST_TYPE(s.Info) == elf.STT_FUNC {
					addrOf[s.Name] = s.Value
				}
			}
			syms, done := openSymbols(t, prog, nil)
			defer done()

			var got []readelfCallSite
			df := syms.dwarfData()
			if err := df.Index(); err != nil {
				t.Fatal(err)
			}
			for i := range df.Units() {
				tree, err := df.Tree(i)
				if err != nil {
					t.Fatal(err)
				}
				for _, cs := range tree.Calls.Sites {
					got = append(got, readelfCallSite{returnPC: cs.ReturnPC, tail: cs.Tail,
						callee: functionName(dwarfreader.DieRef{T: tree, Idx: mustFind(t, tree, cs.Target)})})
				}
			}
			key := func(s readelfCallSite) string { return fmt.Sprintf("%#x tail=%v %s", s.returnPC, s.tail, s.callee) }
			var w, g []string
			for _, s := range want {
				w = append(w, key(s))
			}
			for _, s := range got {
				g = append(g, key(s))
			}
			slices.Sort(w)
			slices.Sort(g)
			if !slices.Equal(w, g) {
				t.Errorf("call sites differ from readelf's:\nreadelf: %q\n     us: %q", w, g)
			}
			tails := 0
			for _, s := range want {
				cs, ok := syms.CallSiteAt(s.returnPC)
				if !ok {
					t.Errorf("CallSiteAt(%#x): none", s.returnPC)
					continue
				}
				if cs.Tail != s.tail || cs.ReturnPC != s.returnPC {
					t.Errorf("CallSiteAt(%#x) = %+v, readelf %+v", s.returnPC, cs, s)
				}
				if a, ok := addrOf[s.callee]; !ok || !slices.Equal(cs.TargetAddrs, []uint64{a}) {
					t.Errorf("call at %#x to %s: targets %#x, symbol table says %#x", s.returnPC, s.callee, cs.TargetAddrs, a)
				}
				if s.tail {
					tails++
				}
			}
			if tails < 3 {
				t.Errorf("%d tail calls, want at least 3: gcc no longer emits the program's jumps", tails)
			}
			// Each relay's tail-call list is its one jump.
			for _, fn := range []string{"relay_a", "merge"} {
				calls, ok := syms.TailCalls(addrOf[fn])
				if !ok || len(calls) != 1 || !calls[0].Tail {
					t.Errorf("TailCalls(%s) = %+v, %v; want its one tail call", fn, calls, ok)
				}
			}
			if _, ok := syms.TailCalls(addrOf["merge"] + 1); ok {
				t.Error("TailCalls accepted an address inside a function")
			}
			if start, ok := syms.FunctionStart(addrOf["merge"] + 3); !ok || start != addrOf["merge"] {
				t.Errorf("FunctionStart(merge+3) = %#x, %v; want %#x", start, ok, addrOf["merge"])
			}
		})
	}
}

func mustFind(t *testing.T, tree *dwarfreader.UnitTree, off dwarf.Offset) int {
	t.Helper()
	i, ok := tree.Find(off)
	if !ok {
		t.Fatalf("call site callee %#x is not in the unit", off)
	}
	return i
}

// TestTailCallFramesMatchGDB dumps a core of the program and checks that,
// for every physical frame of gdb's bt and its caller, TailCallFrames gives
// the pcs of the tail-call frames gdb shows between them (none where gdb
// shows none: direct calls, libc's frames, ambiguous chains), and that
// each symbolizes, innermost level only, to gdb's function and line.
func TestTailCallFramesMatchGDB(t *testing.T) {
	requireTools(t, "gcc", "gdb")
	for _, b := range tailcallBuilds {
		t.Run(b.name, func(t *testing.T) {
			prog := compile(t, "gcc", t.TempDir(), "prog", b.args...)
			core := makeCore(t, prog)
			frames, maps := gdbCoreBacktrace(t, prog, core)

			space := &AddressSpace{}
			modSyms := map[string]*Symbols{}
			biases := map[string]uint64{}
			for path, start := range maps {
				if strings.HasPrefix(path, "[") || !filepath.IsAbs(path) {
					continue
				}
				syms, done := openSymbols(t, path, nil)
				defer done()
				bias := loadBias(t, path, start)
				lo, hi := loadExtent(t, path)
				space.Add(syms, lo+bias, hi+bias, bias)
				modSyms[path], biases[path] = syms, bias
			}

			var tailSeen []string
			for i := 0; i < len(frames); {
				// A physical frame: its inline levels share its pc.
				j := i + 1
				for j < len(frames) && frames[j].pc == frames[i].pc && !frames[j].tailCall {
					j++
				}
				k := j
				for k < len(frames) && frames[k].tailCall {
					k++
				}
				if k >= len(frames) {
					break
				}
				callee := frames[i].pc
				if frames[i].index > 0 {
					callee--
				}
				var want []uint64
				for _, f := range frames[j:k] {
					want = append(want, f.pc)
					tailSeen = append(tailSeen, f.function)
				}
				got := space.TailCallFrames(frames[k].pc, callee)
				if !slices.Equal(got, want) {
					t.Errorf("between #%d %s and #%d %s: tail-call frames %#x, gdb %#x",
						frames[i].index, frames[i].function, frames[k].index, frames[k].function, got, want)
				}
				for _, f := range frames[j:k] {
					path, start := moduleFor(t, maps, f.pc)
					pc := f.pc - loadBias(t, path, start) - 1
					locs := modSyms[path].Lookup(pc)
					if len(locs) == 0 || locs[0].Function != f.function || locs[0].Line != f.line {
						t.Errorf("tail-call frame #%d: %s, gdb %s:%d", f.index, formatLocs(locs), f.function, f.line)
					}
				}
				i = k
			}
			if !slices.Equal(tailSeen, b.tail) {
				t.Errorf("gdb's tail-call frames %q, want %q: the test program no longer exercises them", tailSeen, b.tail)
			}
		})
	}
}

// loadExtent is the link-time address range of a file's PT_LOAD segments.
func loadExtent(t *testing.T, path string) (lo, hi uint64) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lo = ^uint64(0)
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			lo = min(lo, p.Vaddr&^0xfff)
			hi = max(hi, p.Vaddr+p.Memsz)
		}
	}
	return lo, hi
}

// FuzzCallSites decodes the call sites of arbitrary ELF files and runs the
// tail-call search over them: errors and empty answers, never a panic, a
// hang or an unbounded allocation.
func FuzzCallSites(f *testing.F) {
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzbudget.Check(t, len(data), fuzzbudget.Default, func() {
			o, err := object.NewObjectFromBytes("fuzz", data)
			if err != nil {
				return
			}
			s := NewSymbols(o, o)
			df := s.dwarfData()
			if df == nil || df.Index() != nil && len(df.Ranges) == 0 {
				return
			}
			space := &AddressSpace{}
			space.Add(s, 0, ^uint64(0), 0)
			var pcs []uint64
			for i := range df.Units() {
				if i >= 64 {
					break
				}
				tree, err := df.Tree(i)
				if err != nil {
					continue
				}
				for _, cs := range tree.Calls.Sites {
					pcs = append(pcs, cs.ReturnPC)
				}
			}
			for _, rg := range df.Ranges {
				pcs = append(pcs, rg.Lo, rg.Hi-1)
			}
			if len(pcs) > 256 {
				pcs = pcs[:256]
			}
			for _, pc := range pcs {
				if cs, ok := s.CallSiteAt(pc); ok {
					for _, a := range cs.TargetAddrs {
						s.TailCalls(a)
					}
				}
				s.FunctionStart(pc)
				for _, callee := range pcs[:min(len(pcs), 16)] {
					space.TailCallFrames(pc, callee)
				}
			}
		})
	})
}
