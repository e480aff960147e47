package debuginfo

import (
	"cmp"
	"debug/dwarf"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// refDIE is what decodeUnit should keep of a DIE, read with debug/dwarf.
type refDIE struct {
	off             dwarf.Offset
	tag             dwarf.Tag
	depth           int32
	name, linkage   string
	origin, spec    dwarf.Offset
	callFile, callL int64
	low             uint64
	ranges          [][2]uint64
}

// referenceDIEs walks unit u with debug/dwarf's Reader as decodeUnit did
// before it had a walker of its own: every DIE of the kept tags, the
// others skipped with their subtrees.
func referenceDIEs(t *testing.T, d *dwarf.Data, u unitHeader) []refDIE {
	t.Helper()
	r := d.Reader()
	r.Seek(dwarf.Offset(u.dieOff))
	var out []refDIE
	depth := int32(0)
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatalf("unit %#x: debug/dwarf: %v", u.off, err)
		}
		if e == nil || uint64(e.Offset) >= u.end {
			break
		}
		if e.Tag == 0 {
			depth--
			if depth <= 0 {
				break
			}
			continue
		}
		if len(out) > 0 && !keptTag(e.Tag) {
			if e.Children {
				r.SkipChildren()
			}
			continue
		}
		rd := refDIE{off: e.Offset, tag: e.Tag, depth: depth}
		rd.name, _ = e.Val(dwarf.AttrName).(string)
		rd.linkage, _ = e.Val(dwarf.AttrLinkageName).(string)
		if rd.linkage == "" {
			rd.linkage, _ = e.Val(attrMIPSLinkageName).(string)
		}
		rd.origin, _ = e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		rd.spec, _ = e.Val(dwarf.AttrSpecification).(dwarf.Offset)
		rd.callFile, _ = e.Val(dwarf.AttrCallFile).(int64)
		rd.callL, _ = e.Val(dwarf.AttrCallLine).(int64)
		if e.Tag == dwarf.TagSubprogram || e.Tag == dwarf.TagInlinedSubroutine {
			rs, err := d.Ranges(e)
			if err != nil {
				t.Fatalf("DIE %#x: debug/dwarf ranges: %v", e.Offset, err)
			}
			rd.ranges = rs
			rd.low, _ = e.Val(dwarf.AttrLowpc).(uint64)
		}
		out = append(out, rd)
		if e.Children {
			depth++
		} else if len(out) == 1 {
			break
		}
	}
	return out
}

// TestDecodeUnitMatchesDebugDWARF decodes every unit of programs built with
// DWARF 4 and 5, C and C++, -O0 and -O2 (inlined subroutines, DW_AT_ranges
// into .debug_ranges and .debug_rnglists, call sites), and libc's debug
// file when installed, and checks each kept DIE — offset, tag, depth,
// names, references, call coordinates, ranges — against what Go's
// debug/dwarf reads.
func TestDecodeUnitMatchesDebugDWARF(t *testing.T) {
	requireTools(t, "gcc", "g++")
	dir := t.TempDir()
	so := compile(t, "g++", dir, "symtab_only.o", "-O2", "-c", "symtab_only.cpp")
	builds := []struct {
		name, compiler string
		args           []string
	}{
		{"c-O2-dwarf5", "gcc", []string{"-g", "-O2", "assert.c"}},
		{"c-O2-dwarf4", "gcc", []string{"-gdwarf-4", "-O2", "tailcall.c"}},
		{"cpp-O2-dwarf5", "g++", []string{"-g", "-O2", "names.cpp", so}},
		{"cpp-O0-dwarf4", "g++", []string{"-gdwarf-4", "-O0", "names.cpp", so}},
		{"cpp-O2-dwarf4-strict", "g++", []string{"-gdwarf-4", "-gstrict-dwarf", "-O2", "names.cpp", so}},
	}
	var paths []string
	for _, b := range builds {
		paths = append(paths, compile(t, b.compiler, dir, b.name, b.args...))
	}
	if bin, err := OpenObject("/lib/x86_64-linux-gnu/libc.so.6"); err == nil {
		if p, _ := (&Locator{}).FindDebug(bin.Path(), bin); p != "" && p != bin.Path() {
			paths = append(paths, p)
		}
		bin.Close()
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			o, err := OpenObject(path)
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			df, err := openDWARF(o)
			if err != nil || df == nil {
				t.Fatalf("openDWARF: %v", err)
			}
			d, err := o.ELF().DWARF()
			if err != nil {
				t.Fatal(err)
			}
			if err := df.index(); err != nil {
				t.Fatal(err)
			}
			kept, units := 0, 0
			for _, u := range df.units {
				if u.utype != utCompile && u.utype != utPartial {
					continue
				}
				tree, err := decodeUnit(df, u)
				if err != nil {
					t.Fatalf("unit %#x: %v", u.off, err)
				}
				want := referenceDIEs(t, d, u)
				if len(tree.dies) != len(want) {
					t.Fatalf("unit %#x: %d DIEs kept, debug/dwarf walk keeps %d", u.off, len(tree.dies), len(want))
				}
				for i, w := range want {
					g := &tree.dies[i]
					got := refDIE{off: g.off, tag: g.tag, depth: g.depth, name: df.str(g.name), linkage: df.str(g.linkage),
						origin: g.origin, spec: g.spec, callFile: int64(g.callFile), callL: int64(g.callLine)}
					if got.tag == dwarf.TagSubprogram || got.tag == dwarf.TagInlinedSubroutine {
						a, rctx, ok := df.readDIEAt(uint64(g.off))
						if !ok {
							t.Fatalf("DIE %#x: readDIEAt failed", g.off)
						}
						got.ranges, _ = df.appendRanges(nil, &a.pc, &rctx)
						got.low = a.pc.low
						if fmt.Sprint(rangesOf(tree, i)) != fmt.Sprint(nonEmpty(w.ranges)) {
							t.Fatalf("DIE %#x: tree ranges %v, debug/dwarf %v", g.off, rangesOf(tree, i), w.ranges)
						}
					}
					if fmt.Sprint(got) != fmt.Sprint(w) {
						t.Fatalf("DIE %#x:\n got %+v\nwant %+v", w.off, got, w)
					}
				}
				kept += len(want)
				units++
			}
			if kept == 0 {
				t.Fatal("no DIEs kept")
			}
			t.Logf("%d units, %d kept DIEs agree with debug/dwarf", units, kept)
		})
	}
}

// rangesOf lists the ranges decodeUnit recorded for DIE i.
func rangesOf(tree *unitTree, i int) [][2]uint64 {
	var rs [][2]uint64
	for _, rg := range tree.ranged {
		if int(rg.die) == i {
			rs = append(rs, [2]uint64{rg.lo, rg.hi})
		}
	}
	return rs
}

// nonEmpty is rs without empty ranges, sorted by start as unitTree.ranged is.
func nonEmpty(rs [][2]uint64) [][2]uint64 {
	var out [][2]uint64
	for _, rg := range rs {
		if rg[1] > rg[0] {
			out = append(out, rg)
		}
	}
	slices.SortStableFunc(out, func(a, b [2]uint64) int { return cmp.Compare(a[0], b[0]) })
	return out
}

// FuzzUnitDIEs runs the DIE walker, range lists, name resolution and
// callee lookup over arbitrary .debug_info, .debug_abbrev, .debug_str and
// list sections (the last serves as .debug_rnglists, .debug_ranges,
// .debug_addr and .debug_str_offsets): errors and partial trees, never a
// panic, a hang or an unbounded allocation.
func FuzzUnitDIEs(f *testing.F) {
	f.Add([]byte{}, []byte{}, []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, info, abbrev, str, lists []byte) {
		fuzzbudget.Check(t, len(info)+len(abbrev)+len(str)+len(lists), fuzzbudget.Default, func() {
			df := &dwarfFile{
				obj: &Object{path: "fuzz"},
				bo:  binary.LittleEndian,
				sec: dwarfSections{info: info, abbrev: abbrev, str: str, lineStr: str,
					strOffsets: lists, addr: lists, ranges: lists, rnglists: lists},
				decoded: map[int]*unitTree{},
			}
			units, _ := parseUnitHeaders(info, binary.LittleEndian)
			df.indexOnce.Do(func() { df.units = units })
			for i, u := range units {
				if i == 16 {
					break
				}
				df.unitRanges(u)
				tree, err := decodeUnit(df, u)
				if err != nil {
					continue
				}
				for j := range tree.dies {
					if j == 256 {
						break
					}
					functionName(dieRef{tree, j})
				}
				for _, cs := range tree.calls.sites {
					df.callTarget(cs.target)
				}
				tree.innermost(0x1000)
			}
		})
	})
}
