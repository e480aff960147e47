package frame

import (
	"encoding/binary"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// FuzzEHFrame parses arbitrary bytes as .eh_frame with an .eh_frame_hdr
// and looks up and evaluates the row at pc: any input must give a row or an
// error, never a panic or a hang.
func FuzzEHFrame(f *testing.F) {
	f.Fuzz(func(t *testing.T, ehFrame, hdr []byte, pc uint64) {
		fuzzbudget.Check(t, len(ehFrame)+len(hdr), fuzzbudget.Default, func() {
			// As linkers lay them out: .eh_frame_hdr, then .eh_frame 8-aligned.
			const ehAddr = 0x10000
			hdrAddr := ehAddr - uint64(len(hdr)+7)&^7
			for _, h := range [][]byte{hdr, nil} {
				tab := NewEHFrame(ehFrame, ehAddr, h, hdrAddr, binary.LittleEndian, 8)
				tab.Deref = func(uint64) (uint64, error) { return 0x1234, nil }
				tab.RowFor(pc)
				tab.RowFor(pc + 1)
			}
		})
	})
}

// FuzzDebugFrame parses arbitrary bytes as .debug_frame (CIE versions 1, 3
// and 4, 32- and 64-bit DWARF) and evaluates the row at pc.
func FuzzDebugFrame(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, pc uint64) {
		fuzzbudget.Check(t, len(data), fuzzbudget.Default, func() {
			tab := NewDebugFrame(data, 0, binary.LittleEndian, 8)
			tab.RowFor(pc)
			tab.RowFor(pc ^ 0x10)
		})
	})
}

// FuzzCFAProgram runs arbitrary CIE initial instructions and FDE
// instructions (DWARF 5 §6.4.2) up to pc.
func FuzzCFAProgram(f *testing.F) {
	f.Fuzz(func(t *testing.T, initial, instrs []byte, codeAlign uint8, dataAlign int8, pc uint16, eh bool) {
		fuzzbudget.Check(t, len(initial)+len(instrs), fuzzbudget.Default, func() {
			kind := DebugFrame
			if eh {
				kind = EHFrame
			}
			tab := newTable(kind, nil, 0x1000, binary.LittleEndian, 8)
			cie := &CIE{Version: 1, AddressSize: 8, CodeAlign: uint64(codeAlign), DataAlign: int64(dataAlign),
				RAColumn: 16, FDEEncoding: DW_EH_PE_pcrel | DW_EH_PE_sdata4, Initial: initial}
			fde := &FDE{CIE: cie, Begin: 0x1000, End: 0x1000 + 0x10000, Instructions: instrs}
			row, err := tab.Execute(fde, 0x1000+uint64(pc))
			if err == nil && row == nil {
				t.Fatal("nil row without an error")
			}
		})
	})
}
