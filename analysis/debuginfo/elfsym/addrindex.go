package elfsym

import (
	"bytes"
	"debug/elf"
	"sync"
	"sync/atomic"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

// Lookups by address without sorting the table. A core asks a module's
// symbol table for the few pcs its frames have there; reading every entry
// once per pc costs less than sorting them all (libtorch_cpu's .dynsym has
// 35,000) and storing or loading the sorted copy. An AddrIndex answers the
// first maxAddrScans lookups by scanning, and builds the sorted table (or
// reads it from the index cache) for the rest; both answer as
// SymbolTable.Lookup does.

// maxAddrScans is how many lookups an AddrIndex answers by scanning.
const maxAddrScans = 24

// AddrIndex answers pc lookups in one module's table (see above).
type AddrIndex struct {
	raw    func() *SymbolTable // the table's entries, unsorted (nil: none)
	inPLT  func(pc uint64) bool
	build  func() *SymbolTable // the sorted table, name@plt symbols included
	scans  atomic.Int32
	once   sync.Once
	sorted *SymbolTable
}

// NewAddrIndex returns the index of the table raw gives (its entries as
// ReadSymbolsTable wraps them) whose sorted form build returns; pcs
// inPLT says are in a PLT section always go to the sorted table, which
// holds the synthetic name@plt symbols.
func NewAddrIndex(raw func() *SymbolTable, inPLT func(pc uint64) bool, build func() *SymbolTable) *AddrIndex {
	return &AddrIndex{raw: sync.OnceValue(raw), inPLT: inPLT, build: build}
}

// Lookup returns the symbol for pc and the table that names it (see
// SymbolTable.Name); nil when none covers pc.
func (x *AddrIndex) Lookup(pc uint64) (*ElfSymbol, *SymbolTable) {
	if x == nil {
		return nil, nil
	}
	if (x.inPLT == nil || !x.inPLT(pc)) && x.scans.Add(1) <= maxAddrScans {
		if t := x.raw(); t != nil {
			return t.scanLookup(pc), t
		}
	}
	x.once.Do(func() { x.sorted = x.build() })
	if s := x.sorted.Lookup(pc); s != nil {
		return s, x.sorted
	}
	return nil, nil
}

// PLTSections returns whether a pc (link-time) lies in one of o's PLT
// sections, where PltSymbols names stubs.
func PLTSections(o *object.Object) func(pc uint64) bool {
	var secs []*elf.Section
	if o != nil {
		for _, s := range o.Elf.Sections {
			switch s.Name {
			case ".plt", ".plt.sec", ".plt.got", ".plt.bnd":
				secs = append(secs, s)
			}
		}
	}
	return func(pc uint64) bool {
		for _, s := range secs {
			if pc >= s.Addr && pc-s.Addr < s.Size {
				return true
			}
		}
		return false
	}
}

// HasCode reports whether the table has a code symbol (ReadSymbols would
// keep one), reading entries only until it finds one.
func (t *SymbolTable) HasCode() bool {
	if t == nil || t.EntSize == 0 {
		return false
	}
	n := min(len(t.Raw)/t.EntSize, maxSymbols)
	for i := 1; i < n; i++ {
		e, ok := t.entry(i)
		if ok && e.nameOff != 0 && int(e.nameOff) < len(t.strs) && t.strs[e.nameOff] != 0 && knownSymType(e.typ) && t.isCode(e) {
			return true
		}
	}
	return false
}

// scanLookup is Lookup on the unsorted entries: among the code symbols at
// or below pc in pc's section, the last sized one in (address, name)
// order when it reaches pc, else the last zero-sized one if it comes after
// that sized one, else nothing — what walking the sorted table back from
// pc gives (without its 4,096-symbol bound on the walk).
func (t *SymbolTable) scanLookup(pc uint64) *ElfSymbol {
	var sized, zero *ElfSymbol
	t.each(func(e rawSym) {
		if e.value > pc || !t.isCode(e) {
			return
		}
		s := ElfSymbol{nameOff: e.nameOff, Addr: e.value, Size: e.size, Bind: e.bind, IsFun: e.typ != elf.STT_NOTYPE, Shndx: e.shndx}
		if !t.inSection(&s, pc) {
			return
		}
		best := &sized
		if s.Size == 0 {
			best = &zero
		}
		if *best == nil || t.after(&s, *best) {
			*best = &s
		}
	})
	switch {
	case sized == nil:
		return zero
	case pc-sized.Addr < sized.Size:
		return sized
	case zero != nil && t.after(zero, sized):
		return zero
	}
	return nil
}

// after reports whether a sorts after b (by address, then name).
func (t *SymbolTable) after(a, b *ElfSymbol) bool {
	if a.Addr != b.Addr {
		return a.Addr > b.Addr
	}
	return bytes.Compare(t.nameBytes(a), t.nameBytes(b)) > 0
}
