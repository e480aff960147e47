package dwarfreader

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

// Split DWARF (DWARF 5 §3.1.3 "Skeleton Compilation Units", appendix F;
// gcc -gsplit-dwarf): the binary keeps a skeleton unit per compilation unit
// with its address ranges, DW_AT_stmt_list into the binary's .debug_line,
// DW_AT_addr_base into the binary's .debug_addr, and DW_AT_dwo_name; the
// DIEs live in the unit of the same dwo_id in a .dwo file, in sections
// named .debug_*.dwo. Addresses there are DW_FORM_addrx indexes into the
// binary's .debug_addr at the skeleton's DW_AT_addr_base; strings are
// DW_FORM_strx indexes into .debug_str_offsets.dwo past its header
// (§7.26: the split unit has no DW_AT_str_offsets_base); DW_FORM_rnglistx
// indexes .debug_rnglists.dwo's offset table past its header.
//
// The split unit is decoded by debug/dwarf over sections sliced to those
// bases (so that its zero bases are right), into a dwarfFile of its own
// whose line table source is the skeleton's.

// dwoSearch says where .dwo files may be: the directories of the binary and
// of its debug file (gdb also looks there after DW_AT_comp_dir); and where
// a split DWARF package may be (dwp.go).
type dwoSearch struct {
	dirs     []string
	dwpPaths []string

	mu    sync.Mutex
	files map[string]*object.Object // opened .dwo files by path (nil: not openable)

	dwpOnce sync.Once
	dwp     *dwpPackage // nil if none of dwpPaths is a usable package
}

// NewDWOSearch returns where the split units of binary (with its debug
// file, which may be nil or binary) are looked for.
func NewDWOSearch(binary, debug *object.Object) *dwoSearch {
	s := &dwoSearch{}
	for _, o := range []*object.Object{binary, debug} {
		if o != nil && o.Path() != "" {
			s.dirs = append(s.dirs, filepath.Dir(o.Path()))
		}
	}
	s.dwpPaths = dwpCandidates(binary, debug)
	return s
}

func (s *dwoSearch) open(path string) *object.Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o, ok := s.files[path]; ok {
		return o
	}
	if s.files == nil {
		s.files = map[string]*object.Object{}
	}
	var o *object.Object
	if object.IsRegular(path) {
		o, _ = object.OpenObject(path)
	}
	s.files[path] = o
	return o
}

func (s *dwoSearch) Close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.files {
		o.Close()
	}
	s.files = nil
	s.dwpOnce.Do(func() {}) // no package opened after this
	if s.dwp != nil {
		s.dwp.obj.Close()
		s.dwp = nil
	}
}

// skeleton is what a skeleton unit's top DIE says about its split unit.
type skeleton struct {
	dwoName, compDir string
	dwoID            uint64
	addrBase         uint64
	stmtList         int64
	// gnu marks a DWARF 4 skeleton (GNU DebugFission): its split unit is a
	// version 4 compile unit naming the same DW_AT_GNU_dwo_id, whose
	// DW_AT_ranges are offsets from DW_AT_GNU_ranges_base in the binary's
	// .debug_ranges and whose .debug_str_offsets.dwo has no header.
	gnu        bool
	rangesBase uint64
	base       uint64 // the skeleton's DW_AT_low_pc: the split unit's base address
}

// isGNUSkeleton reports whether u is a DWARF 4 skeleton unit: a compile
// unit whose DIE names a .dwo with DW_AT_GNU_dwo_name.
func (df *DwarfFile) isGNUSkeleton(u UnitHeader) bool {
	if u.Vers >= 5 || u.Utype != UtCompile || df.skeleton != nil {
		return false
	}
	ud, err := df.ReadUnitDIE(u, false)
	return err == nil && ud.Attrs.dwoName != 0
}

// decodeSkeleton reads the split unit behind skeleton unit i and returns
// its DIE tree, with the skeleton's line table, comp_dir and addresses.
func (df *DwarfFile) decodeSkeleton(i int) (*UnitTree, error) {
	u := df.Unit(i)
	sk, err := df.readSkeleton(u)
	if err != nil {
		return nil, err
	}
	var tried []string
	// A package first, as gdb: with one, it holds every unit.
	if p := df.Dwo.Pkg(); p != nil {
		tried = append(tried, p.obj.Path())
		if ss, ok := p.unitSections(sk.dwoID); ok {
			t, err := df.decodeSplitUnit(p.obj, ss, sk)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p.obj.Path(), err)
			}
			if t != nil {
				return t, nil
			}
		}
	} else if df.Dwo != nil {
		tried = append(tried, df.Dwo.dwpPaths...)
	}
	for _, cand := range df.dwoCandidates(sk) {
		tried = append(tried, cand)
		o := df.Dwo.open(cand)
		if o == nil {
			continue
		}
		t, err := df.decodeSplitUnit(o, dwoSections(o), sk)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cand, err)
		}
		if t != nil {
			return t, nil
		}
	}
	return nil, &MissingDWOError{Name: sk.dwoName, Tried: tried}
}

// MissingDWOError reports a skeleton unit whose .dwo file was not found.
type MissingDWOError struct {
	Name  string
	Tried []string
}

func (e *MissingDWOError) Error() string {
	return fmt.Sprintf("split DWARF: %s not found (tried %v); copy the .dwo files beside the binary", e.Name, e.Tried)
}

// readSkeleton reads the skeleton unit's top DIE and dwo_id.
func (df *DwarfFile) readSkeleton(u UnitHeader) (skeleton, error) {
	ud, err := df.ReadUnitDIE(u, false)
	if err != nil {
		return skeleton{}, &object.FormatError{Path: df.Obj.Path(), Format: ".debug_info", Off: int64(u.Off), Msg: "unreadable skeleton unit"}
	}
	sk := skeleton{
		dwoName:    df.Str(ud.Attrs.dwoName),
		compDir:    df.Str(ud.Attrs.compDir),
		addrBase:   nonNegative(ud.Attrs.addrBase),
		stmtList:   -1,
		dwoID:      u.dwoID,
		gnu:        u.Vers < 5,
		rangesBase: nonNegative(ud.Attrs.gnuRangesBase),
		base:       ud.Rctx.Base,
	}
	if sk.gnu {
		sk.dwoID = ud.Attrs.gnuDwoID
	}
	if ud.Attrs.hasStmtList {
		sk.stmtList = ud.Attrs.stmtList
	}
	if sk.dwoName == "" {
		return sk, &object.FormatError{Path: df.Obj.Path(), Format: ".debug_info", Off: int64(u.Off), Msg: "skeleton unit without DW_AT_dwo_name"}
	}
	return sk, nil
}

// dwoCandidates lists where the .dwo may be, in gdb's order: the name as
// is when absolute, under DW_AT_comp_dir, then beside the binary and its
// debug file.
func (df *DwarfFile) dwoCandidates(sk skeleton) []string {
	var out []string
	name := sk.dwoName
	if filepath.IsAbs(name) {
		out = append(out, name)
	} else if sk.compDir != "" {
		out = append(out, filepath.Join(sk.compDir, name))
	}
	if df.Dwo != nil {
		for _, d := range df.Dwo.dirs {
			out = append(out, filepath.Join(d, filepath.Base(name)))
		}
	}
	seen := map[string]bool{}
	uniq := out[:0]
	for _, c := range out {
		if !seen[c] {
			seen[c] = true
			uniq = append(uniq, c)
		}
	}
	return uniq
}

// splitSections are the sections of one .dwo file, or one unit's
// contributions to them in a package, before their headers are skipped.
type splitSections struct {
	info, abbrev, str, strOffsets, rnglists []byte
	// loc is .debug_loclists.dwo (DWARF 5) or .debug_loc.dwo (DWARF 4).
	loc []byte
}

// dwoSections are the split DWARF sections of a .dwo file.
func dwoSections(o *object.Object) splitSections {
	sec := func(name string) []byte {
		d, _, _ := o.Section(name)
		return d
	}
	return splitSections{info: sec(".debug_info.dwo"), abbrev: sec(".debug_abbrev.dwo"), str: sec(".debug_str.dwo"),
		strOffsets: sec(".debug_str_offsets.dwo"), rnglists: sec(".debug_rnglists.dwo"), loc: loc(o)}
}

// loc is a .dwo's location lists: .debug_loclists.dwo, else DWARF 4's
// .debug_loc.dwo.
func loc(o *object.Object) []byte {
	if d, _, ok := o.Section(".debug_loclists.dwo"); ok {
		return d
	}
	d, _, _ := o.Section(".debug_loc.dwo")
	return d
}

// decodeSplitUnit decodes the split unit with sk's dwo_id in ss, sections
// of the .dwo or package o; nil, nil if ss has no such unit.
func (df *DwarfFile) decodeSplitUnit(o *object.Object, ss splitSections, sk skeleton) (*UnitTree, error) {
	info := ss.info
	if info == nil {
		return nil, errors.New("no .debug_info.dwo")
	}
	units, err := ParseUnitHeaders(info, o.Elf.ByteOrder)
	if err != nil && len(units) == 0 {
		return nil, err
	}
	sdf := &DwarfFile{Obj: o, Bo: o.Elf.ByteOrder, Line: df.Line, Strs: df.Strs, Sec: df.splitSections(ss, sk),
		Decoded: map[int]*UnitTree{}, skeleton: &sk}
	sdf.setUnits(units)
	sdf.IndexOnce.Do(func() {}) // a split file is looked up by dwo_id, never by address
	for i, u := range units {
		if !sdf.isSplitUnitOf(u, sk) {
			continue
		}
		t, err := sdf.Tree(i)
		if err != nil {
			return nil, err
		}
		if t.StmtList < 0 {
			t.StmtList = sk.stmtList
		}
		if t.CompDir == "" {
			t.CompDir = sk.compDir
		}
		// The skeleton's addresses size the line program's DW_LNE_set_address.
		if t.Hdr.Asize == 0 {
			t.Hdr.Asize = 8
		}
		return t, nil
	}
	return nil, nil
}

// splitSections are the sections a split unit is read from: its own .dwo
// sections, and the binary's .debug_addr (and, for a DWARF 4 unit,
// .debug_ranges) from the skeleton's bases.
func (df *DwarfFile) splitSections(ss splitSections, sk skeleton) DwarfSections {
	secs := DwarfSections{Info: object.NewLazyBytes(".debug_info.dwo", ss.info), Abbrev: object.NewLazyBytes(".debug_abbrev.dwo", ss.abbrev),
		Str: object.NewLazyBytes(".debug_str.dwo", ss.str), SplitLoc: object.NewLazyBytes(".debug_loc.dwo", ss.loc)}
	// Index forms in a split unit are relative to the start of the .dwo's
	// offset tables (after their DWARF 5 headers: length, version,
	// padding, and for range lists address size, segment selector size
	// and offset count, §7.26, §7.28) and, for addresses, to the
	// skeleton's DW_AT_addr_base in the binary's .debug_addr (§3.1.3).
	// DebugFission's tables have no header, and its range lists are in
	// the binary, from DW_AT_GNU_ranges_base.
	if sk.gnu {
		secs.StrOffsets = object.NewLazyBytes(".debug_str_offsets.dwo", ss.strOffsets)
		if r, _, ok := df.Obj.Section(".debug_ranges"); ok && sk.rangesBase <= uint64(len(r)) {
			secs.Ranges = object.NewLazyBytes(".debug_ranges", r[sk.rangesBase:])
		}
	} else {
		secs.StrOffsets = object.NewLazyBytes(".debug_str_offsets.dwo", skipOffsetsHeader(ss.strOffsets, 8))
		secs.Rnglists = object.NewLazyBytes(".debug_rnglists.dwo", skipOffsetsHeader(ss.rnglists, 12))
	}
	if addr, _, ok := df.Obj.Section(".debug_addr"); ok && sk.addrBase <= uint64(len(addr)) {
		secs.Addr = object.NewLazyBytes(".debug_addr", addr[sk.addrBase:])
	}
	return secs
}

// isSplitUnitOf reports whether u is the split unit skeleton sk names:
// a DWARF 5 split unit with its dwo_id, or a DWARF 4 compile unit whose
// DW_AT_GNU_dwo_id is it (any, when the skeleton gives no id).
func (df *DwarfFile) isSplitUnitOf(u UnitHeader, sk skeleton) bool {
	if !sk.gnu {
		return u.Utype == utSplitCU && (sk.dwoID == 0 || u.dwoID == sk.dwoID)
	}
	if u.Vers >= 5 || u.Utype != UtCompile {
		return false
	}
	if sk.dwoID == 0 {
		return true
	}
	ud, err := df.ReadUnitDIE(u, false)
	return err == nil && ud.Attrs.hasGNUDwoID && ud.Attrs.gnuDwoID == sk.dwoID
}

// skipOffsetsHeader drops the DWARF 5 header of a .debug_str_offsets,
// .debug_rnglists or .debug_loclists section (§7.26, §7.28, §7.29): the
// 4-byte length (12 bytes in 64-bit DWARF, which makes the header 8 longer)
// and the rest, hdr bytes in all for 32-bit DWARF.
func skipOffsetsHeader(b []byte, hdr int) []byte {
	if len(b) >= 4 && b[0] == 0xff && b[1] == 0xff && b[2] == 0xff && b[3] == 0xff {
		hdr += 8
	}
	if len(b) < hdr {
		return nil
	}
	return b[hdr:]
}
