package symbolize

import (
	"cmp"
	"debug/dwarf"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/faultline-dev/faultline/analysis/debuginfo/debugfile"
	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfreader"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
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
func referenceDIEs(t *testing.T, d *dwarf.Data, u dwarfreader.UnitHeader) []refDIE {
	t.Helper()
	r := d.Reader()
	r.Seek(dwarf.Offset(u.DieOff))
	var out []refDIE
	depth := int32(0)
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatalf("unit %#x: debug/dwarf: %v", u.Off, err)
		}
		if e == nil || uint64(e.Offset) >= u.End {
			break
		}
		if e.Tag == 0 {
			depth--
			if depth <= 0 {
				break
			}
			continue
		}
		if len(out) > 0 && !dwarfreader.KeptTag(e.Tag) {
			if e.Children {
				r.SkipChildren()
			}
			continue
		}
		rd := refDIE{off: e.Offset, tag: e.Tag, depth: depth}
		rd.name, _ = e.Val(dwarf.AttrName).(string)
		rd.linkage, _ = e.Val(dwarf.AttrLinkageName).(string)
		if rd.linkage == "" {
			rd.linkage, _ = e.Val(dwarfreader.AttrMIPSLinkageName).(string)
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
	if bin, err := object.OpenObject("/lib/x86_64-linux-gnu/libc.so.6"); err == nil {
		if p, _ := (&debugfile.Locator{}).FindDebug(bin.Path(), bin); p != "" && p != bin.Path() {
			paths = append(paths, p)
		}
		bin.Close()
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			o, err := object.OpenObject(path)
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			df, err := dwarfreader.OpenDWARF(o)
			if err != nil || df == nil {
				t.Fatalf("openDWARF: %v", err)
			}
			d, err := o.ELF().DWARF()
			if err != nil {
				t.Fatal(err)
			}
			if err := df.Index(); err != nil {
				t.Fatal(err)
			}
			kept, units := 0, 0
			for _, u := range df.Units() {
				if u.Utype != dwarfreader.UtCompile && u.Utype != dwarfreader.UtPartial {
					continue
				}
				tree, err := dwarfreader.DecodeUnit(df, u)
				if err != nil {
					t.Fatalf("unit %#x: %v", u.Off, err)
				}
				want := referenceDIEs(t, d, u)
				if len(tree.Dies) != len(want) {
					t.Fatalf("unit %#x: %d DIEs kept, debug/dwarf walk keeps %d", u.Off, len(tree.Dies), len(want))
				}
				for i, w := range want {
					g := &tree.Dies[i]
					got := refDIE{off: g.Off, tag: g.Tag, depth: g.Depth, name: df.Str(g.Name), linkage: df.Str(g.Linkage),
						origin: g.Origin, spec: g.Spec, callFile: int64(g.CallFile), callL: int64(g.CallLine)}
					if got.tag == dwarf.TagSubprogram || got.tag == dwarf.TagInlinedSubroutine {
						a, rctx, ok := df.ReadDIEAt(uint64(g.Off))
						if !ok {
							t.Fatalf("DIE %#x: readDIEAt failed", g.Off)
						}
						got.ranges, _ = df.AppendRanges(nil, &a.Pc, &rctx)
						got.low = a.Pc.Low
						if fmt.Sprint(rangesOf(tree, i)) != fmt.Sprint(nonEmpty(w.ranges)) {
							t.Fatalf("DIE %#x: tree ranges %v, debug/dwarf %v", g.Off, rangesOf(tree, i), w.ranges)
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
func rangesOf(tree *dwarfreader.UnitTree, i int) [][2]uint64 {
	var rs [][2]uint64
	for _, rg := range tree.Ranged {
		if int(rg.Die) == i {
			rs = append(rs, [2]uint64{rg.Lo, rg.Hi})
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
			df := &dwarfreader.DwarfFile{
				Obj: &object.Object{}, // no path: only error messages name it
				Bo:  binary.LittleEndian,
				Sec: dwarfreader.DwarfSections{Info: object.NewLazyBytes(".debug_info", info), Abbrev: object.NewLazyBytes(".debug_abbrev", abbrev),
					Str: object.NewLazyBytes(".debug_str", str), LineStr: object.NewLazyBytes(".debug_line_str", str),
					StrOffsets: object.NewLazyBytes(".debug_str_offsets", lists), Addr: object.NewLazyBytes(".debug_addr", lists),
					Ranges: object.NewLazyBytes(".debug_ranges", lists), Rnglists: object.NewLazyBytes(".debug_rnglists", lists)},
				Decoded: map[int]*dwarfreader.UnitTree{},
			}
			units, _ := dwarfreader.ParseUnitHeaders(info, binary.LittleEndian)
			for i, u := range units {
				if i == 16 {
					break
				}
				df.UnitRanges(u)
				tree, err := dwarfreader.DecodeUnit(df, u)
				if err != nil {
					continue
				}
				for j := range tree.Dies {
					if j == 256 {
						break
					}
					functionName(dwarfreader.DieRef{T: tree, Idx: j})
				}
				for _, cs := range tree.Calls.Sites {
					callTarget(df, cs.Target)
				}
				tree.Innermost(0x1000)
			}
		})
	})
}
