package variables

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfreader"
	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// fakeFrame is a frame with a few registers and 64 bytes of memory at
// 0x1000, for evaluating expressions without a core.
type fakeFrame struct{}

func (fakeFrame) Reg(n uint64) (uint64, bool) { return 0x1000 + n*8, n < 17 }
func (fakeFrame) CFA() (uint64, bool)         { return 0x1020, true }
func (fakeFrame) ReadMemory(addr uint64, b []byte) (int, error) {
	if addr < 0x1000 || addr+uint64(len(b)) > 0x1040 {
		return 0, errors.New("unmapped")
	}
	for i := range b {
		b[i] = byte(addr) + byte(i)
	}
	return len(b), nil
}

// FuzzLocationList reads untrusted location lists (.debug_loclists with
// every DW_LLE_* kind, .debug_loc, and with vers's top bit set GNU
// DebugFission's .debug_loc.dwo) and evaluates the expression found:
// no panic, no hang, whatever the bytes.
func FuzzLocationList(f *testing.F) {
	f.Add([]byte{lleOffsetPair, 0x00, 0x10, 0x02, 0x91, 0x70, lleEndOfList}, uint64(0x1008), uint8(5))
	f.Add([]byte{lleBaseAddress, 0, 0x20, 0, 0, 0, 0, 0, 0, lleStartLength, 0, 0x20, 0, 0, 0, 0, 0, 0, 0x08, 0x01, 0x55, lleDefaultLocation, 0x02, 0x30, 0x9f, lleEndOfList}, uint64(0x2004), uint8(5))
	f.Add([]byte{lleStartxLength, 0x00, 0x04, 0x01, 0x50, lleBaseAddressx, 0x01, lleStartxEndx, 0, 1, 0x03, 0x9e, 0x01, 0x07, lleEndOfList}, uint64(0x10), uint8(5))
	f.Add([]byte{0x00, 0x10, 0, 0, 0, 0, 0, 0, 0x40, 0x10, 0, 0, 0, 0, 0, 0, 0x03, 0x00, 0x50, 0x93, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, uint64(0x1010), uint8(4))
	f.Add([]byte{lleGNUBaseAddressSelect, 0, lleGNUViewPair, 1, 2, lleGNUStartEnd, 0, 1, 0x01, 0x00, 0x50, lleGNUStartLength, 1, 0x10, 0, 0, 0, 0x01, 0x00, 0x51, lleGNUEndOfList}, uint64(0x1104), uint8(0x84))
	f.Fuzz(func(t *testing.T, sec []byte, pc uint64, vers uint8) {
		fuzzbudget.Check(t, len(sec), fuzzbudget.Default, func() {
			addr := make([]byte, 16)
			binary.LittleEndian.PutUint64(addr, 0x1000)
			binary.LittleEndian.PutUint64(addr[8:], 0x1100)
			c := &locListCtx{vers: int(vers & 0x7f), asize: 8, base: 0x1000, bo: binary.LittleEndian, addr: addr, gnuSplit: vers&0x80 != 0}
			expr, err := findLocation(sec, 0, pc, c)
			if err != nil {
				return
			}
			env := &exprEnv{frame: fakeFrame{}, bo: binary.LittleEndian, asize: 8, offSize: 4, bias: 0x400000,
				frameBase: func() (uint64, error) { return 0x1020, nil },
				addrx:     func(idx uint64) (uint64, bool) { return dwarfreader.ReadAt(addr, idx*8, 8, binary.LittleEndian) }}
			if l, err := env.eval(expr); err == nil && l.kind == locImplicit && len(l.bytes) > 8 && expr[0] != opImplicitValue {
				t.Fatalf("pieces assembled %d bytes", len(l.bytes))
			}
		})
	})
}

// TestLocationList checks each DW_LLE_* kind and .debug_loc against the
// addresses and expressions they encode.
func TestLocationList(t *testing.T) {
	addr := make([]byte, 16)
	binary.LittleEndian.PutUint64(addr, 0x1000)
	binary.LittleEndian.PutUint64(addr[8:], 0x1100)
	c5 := &locListCtx{vers: 5, asize: 8, base: 0x1000, bo: binary.LittleEndian, addr: addr}
	u64 := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	var list []byte
	list = append(list, lleOffsetPair, 0x00, 0x10, 0x01, 0x50)               // [0x1000,0x1010): reg0
	list = append(list, lleStartxEndx, 0x00, 0x01, 0x01, 0x51)               // [0x1000,0x1100): reg1 (shadowed below 0x1010)
	list = append(list, lleBaseAddress)                                      // base 0x2000
	list = append(list, u64(0x2000)...)                                      //
	list = append(list, lleOffsetPair, 0x00, 0x08, 0x01, 0x52)               // [0x2000,0x2008): reg2
	list = append(list, lleStartLength)                                      //
	list = append(list, u64(0x3000)...)                                      //
	list = append(list, 0x04, 0x01, 0x53)                                    // [0x3000,0x3004): reg3
	list = append(list, lleBaseAddressx, 0x01, lleOffsetPair, 0, 4, 1, 0x54) // [0x1100,0x1104): reg4
	list = append(list, lleEndOfList)
	for pc, want := range map[uint64]byte{0x1000: 0x50, 0x100f: 0x50, 0x1010: 0x51, 0x2007: 0x52, 0x3003: 0x53, 0x1103: 0x54} {
		got, err := findLocation(list, 0, pc, c5)
		if err != nil || len(got) != 1 || got[0] != want {
			t.Errorf("pc %#x: %x, %v; want %x", pc, got, err, want)
		}
	}
	for _, pc := range []uint64{0xfff, 0x2008, 0x3004, 0x1104} {
		if got, err := findLocation(list, 0, pc, c5); !errors.Is(err, errNoLocation) {
			t.Errorf("pc %#x: %x, %v; want no location", pc, got, err)
		}
	}
	// DWARF 4 .debug_loc: a pair relative to the unit base, a base
	// selection entry, a pair relative to it, the end.
	var loc []byte
	loc = append(append(loc, u64(0x0)...), u64(0x10)...)
	loc = append(loc, 1, 0, 0x50)
	loc = append(append(loc, u64(^uint64(0))...), u64(0x5000)...)
	loc = append(append(loc, u64(0x4)...), u64(0x8)...)
	loc = append(loc, 1, 0, 0x55)
	loc = append(loc, make([]byte, 16)...)
	c4 := &locListCtx{vers: 4, asize: 8, base: 0x1000, bo: binary.LittleEndian}
	if got, err := findLocation(loc, 0, 0x1004, c4); err != nil || got[0] != 0x50 {
		t.Errorf(".debug_loc 0x1004: %x, %v", got, err)
	}
	if got, err := findLocation(loc, 0, 0x5006, c4); err != nil || got[0] != 0x55 {
		t.Errorf(".debug_loc 0x5006: %x, %v", got, err)
	}
	if _, err := findLocation(loc, 0, 0x5008, c4); !errors.Is(err, errNoLocation) {
		t.Errorf(".debug_loc 0x5008: %v, want no location", err)
	}
}

// TestGNUSplitLocationList reads a .debug_loc.dwo list (GNU DebugFission)
// of every entry kind: addresses are .debug_addr entries, absolute (the
// base selection does not move them), lengths 4 bytes, expressions with a
// 2-byte length; a view pair is skipped.
func TestGNUSplitLocationList(t *testing.T) {
	addr := make([]byte, 24)
	binary.LittleEndian.PutUint64(addr, 0x1000)
	binary.LittleEndian.PutUint64(addr[8:], 0x1100)
	binary.LittleEndian.PutUint64(addr[16:], 0x9000)
	c := &locListCtx{vers: 4, asize: 8, base: 0x5000, bo: binary.LittleEndian, addr: addr, gnuSplit: true}
	list := []byte{
		lleGNUBaseAddressSelect, 2, // base 0x9000: not added to what follows
		lleGNUViewPair, 0, 1,
		lleGNUStartEnd, 0, 1, 0x01, 0x00, 0x50, // [0x1000, 0x1100): DW_OP_reg0
		lleGNUStartLength, 1, 0x10, 0, 0, 0, 0x01, 0x00, 0x51, // [0x1100, 0x1110): DW_OP_reg1
		lleGNUEndOfList,
	}
	for _, tc := range []struct {
		pc   uint64
		want byte
	}{{0x1000, 0x50}, {0x10ff, 0x50}, {0x1100, 0x51}, {0x110f, 0x51}} {
		if got, err := findLocation(list, 0, tc.pc, c); err != nil || len(got) != 1 || got[0] != tc.want {
			t.Errorf("pc %#x: %x, %v; want %x", tc.pc, got, err, tc.want)
		}
	}
	for _, pc := range []uint64{0x0fff, 0x1110, 0x9000 + 0x1000} {
		if got, err := findLocation(list, 0, pc, c); !errors.Is(err, errNoLocation) {
			t.Errorf("pc %#x: %x, %v; want no location", pc, got, err)
		}
	}
	if _, err := findLocation([]byte{lleGNUStartEnd, 7, 0, 0x01, 0x00, 0x50, 0}, 0, 0x1000, c); err == nil || errors.Is(err, errNoLocation) {
		t.Errorf("address index 7 past .debug_addr: %v, want an error", err)
	}
	if _, err := findLocation([]byte{0x04}, 0, 0x1000, c); err == nil || errors.Is(err, errNoLocation) {
		t.Errorf("unknown kind: %v, want an error", err)
	}
}
