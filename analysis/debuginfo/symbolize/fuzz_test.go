package symbolize

import (
	"debug/elf"
	"encoding/binary"
	"testing"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfline"
	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfreader"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// FuzzObject feeds arbitrary bytes to the ELF, section, note, symbol table
// and DWARF readers: they must return errors or partial results, never
// panic, hang or allocate without bound.
func FuzzObject(f *testing.F) {
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzbudget.Check(t, len(data), fuzzbudget.Default, func() {
			o, err := object.NewObjectFromBytes("fuzz", data)
			if err != nil {
				return
			}
			o.BuildID()
			o.DebugLink()
			o.SupplementaryLink()
			o.SupplementaryID()
			for _, name := range []string{".text", ".debug_info", ".debug_line", ".eh_frame"} {
				o.Section(name)
			}
			buf := make([]byte, 8)
			o.ReadAt(buf, 0x1000)
			s := NewSymbols(o, o)
			// No supplementary (dwz) file is ever found: references and strings
			// into one must fail cleanly.
			s.FindSupplementary = func(string, string, []byte) (string, []string) { return "", nil }
			s.HasDWARF()
			s.SymbolAddr("main")
			for _, pc := range []uint64{0, 0x1000, 0x1139, 0x1150, 0x401000} {
				s.Lookup(pc)
			}
			if df := s.dwarfData(); df != nil {
				for _, rg := range df.Ranges {
					s.Lookup(rg.Lo)
					s.Lookup(rg.Hi - 1)
				}
			}
		})
	})
}

// FuzzLineProgram runs the line number program reader and gdb's line
// table construction on arbitrary .debug_line bytes.
func FuzzLineProgram(f *testing.F) {
	f.Add([]byte{}, uint64(0x1139))
	f.Fuzz(func(t *testing.T, data []byte, pc uint64) {
		fuzzbudget.Check(t, len(data), fuzzbudget.Default, func() {
			p, _ := dwarfline.ParseLineProgram(data, 0, binary.LittleEndian, 8, dwarfline.LineStrings{LineStr: object.NewLazyBytes(".debug_line_str", data),
				Str: object.NewLazyBytes(".debug_str", data), StrOffsets: object.NewLazyBytes(".debug_str_offsets", data)})
			if p == nil {
				return
			}
			lt := dwarfline.BuildLineTable(p, "a.c", "/src")
			lt.Lookup(pc)
			for _, r := range p.Rows {
				lt.Lookup(r.Addr)
			}
			for i := range p.Files {
				lt.FileNameAt(uint64(i))
			}
		})
	})
}

// FuzzDWARFIndex runs the .debug_info unit header and .debug_aranges
// readers on arbitrary bytes.
func FuzzDWARFIndex(f *testing.F) {
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzbudget.Check(t, len(data), fuzzbudget.Default, func() {
			dwarfreader.ParseUnitHeaders(data, binary.LittleEndian)
			dwarfreader.ParseAranges(data, binary.LittleEndian)
			object.DecompressGNU(data)
			object.DecompressELF(data, elf.ELFCLASS64, binary.LittleEndian)
		})
	})
}
