package elfsym

import (
	"debug/elf"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

// Name lookups the way the dynamic linker does them: through the module's
// .gnu.hash table (or the System V .hash table when it has none), which
// leads from a name's hash to the one bucket of .dynsym entries that can
// hold it. A lookup reads a few entries and names, never the whole symbol
// or string table — libtorch's .dynsym alone is tens of MB.
//
// Formats: .gnu.hash as glibc's dl-lookup.c and binutils' bfd/elflink.c
// write and read it (nbuckets, symoffset, bloom_size, bloom_shift, the bloom
// filter of ELFCLASS words, buckets, then one chain word per symbol from
// symoffset, the low bit marking a chain's end); .hash as the System V ABI
// ("Hash Table": nbucket, nchain, bucket[], chain[]).

// DynHash is a module's dynamic symbol hash table with the .dynsym and
// .dynstr it indexes.
type DynHash struct {
	gnu  bool
	syms *SymbolTable // .dynsym entries and .dynstr

	// .gnu.hash
	symOffset  uint32
	bloomShift uint32
	bloom      []byte // bloom_size ELFCLASS words
	wordSize   int
	buckets    []byte // nbuckets 32-bit words (both formats)
	chains     []byte // 32-bit words
	nbuckets   uint32
}

// gnuHash is the .gnu.hash function (Bernstein's h*33 + c).
func gnuHash(name string) uint32 {
	h := uint32(5381)
	for i := 0; i < len(name); i++ {
		h = h*33 + uint32(name[i])
	}
	return h
}

// sysvHash is the System V ABI's ELF hash function.
func sysvHash(name string) uint32 {
	var h uint32
	for i := 0; i < len(name); i++ {
		h = h<<4 + uint32(name[i])
		g := h & 0xf0000000
		if g != 0 {
			h ^= g >> 24
		}
		h &^= g
	}
	return h
}

// OpenDynHash finds o's .gnu.hash (preferred, as glibc prefers it) or
// .hash section; nil when it has neither or they are malformed.
func OpenDynHash(o *object.Object) *DynHash {
	if o == nil {
		return nil
	}
	for _, name := range []string{".gnu.hash", ".hash"} {
		s := o.Elf.Section(name)
		if s == nil || int(s.Link) >= len(o.Elf.Sections) {
			continue
		}
		dyn := o.Elf.Sections[s.Link]
		if dyn.Type != elf.SHT_DYNSYM {
			continue
		}
		t := ReadSymbolsTable(o, dyn)
		if t == nil {
			continue
		}
		if h := ParseDynHash(o.RawSection(s), name == ".gnu.hash", o.Elf.Class, t); h != nil {
			return h
		}
	}
	return nil
}

// ParseDynHash checks and slices a hash section's header and arrays.
func ParseDynHash(b []byte, gnu bool, class elf.Class, syms *SymbolTable) *DynHash {
	bo := syms.bo
	if len(b) < 16 && gnu || len(b) < 8 {
		return nil
	}
	h := &DynHash{gnu: gnu, syms: syms}
	if !gnu {
		nb, nc := uint64(bo.Uint32(b)), uint64(bo.Uint32(b[4:]))
		if nb == 0 || 8+4*(nb+nc) > uint64(len(b)) {
			return nil
		}
		h.nbuckets = uint32(nb)
		h.buckets = b[8 : 8+4*nb]
		h.chains = b[8+4*nb : 8+4*(nb+nc)]
		return h
	}
	nb, symOff, bloomSize, shift := uint64(bo.Uint32(b)), bo.Uint32(b[4:]), uint64(bo.Uint32(b[8:])), bo.Uint32(b[12:])
	h.wordSize = 8
	if class == elf.ELFCLASS32 {
		h.wordSize = 4
	}
	bloomEnd := 16 + bloomSize*uint64(h.wordSize)
	if nb == 0 || bloomSize == 0 || bloomEnd+4*nb > uint64(len(b)) {
		return nil
	}
	h.nbuckets, h.symOffset, h.bloomShift = uint32(nb), symOff, shift
	h.bloom = b[16:bloomEnd]
	h.buckets = b[bloomEnd : bloomEnd+4*nb]
	h.chains = b[bloomEnd+4*nb:]
	return h
}

// word32 is the i-th 32-bit word of b, ok false past its end.
func (h *DynHash) word32(b []byte, i uint64) (uint32, bool) {
	if i >= uint64(len(b))/4 {
		return 0, false
	}
	return h.syms.bo.Uint32(b[4*i:]), true
}

// maxHashChain bounds one chain walk in a malformed table.
const maxHashChain = 1 << 16

// lookup calls fn with the index of every .dynsym entry named name.
func (h *DynHash) lookup(name string, fn func(i uint32)) {
	if h == nil {
		return
	}
	if !h.gnu {
		i, ok := h.word32(h.buckets, uint64(sysvHash(name)%h.nbuckets))
		for n := 0; ok && i != 0 && n < maxHashChain; n++ {
			if h.nameIs(i, name) {
				fn(i)
			}
			i, ok = h.word32(h.chains, uint64(i))
		}
		return
	}
	hash := gnuHash(name)
	// The bloom filter rejects most absent names from one word.
	ws := uint32(h.wordSize * 8)
	wi := uint64(hash/ws) % uint64(len(h.bloom)/h.wordSize)
	var word uint64
	if h.wordSize == 8 {
		word = h.syms.bo.Uint64(h.bloom[8*wi:])
	} else {
		word = uint64(h.syms.bo.Uint32(h.bloom[4*wi:]))
	}
	mask := uint64(1)<<(hash%ws) | uint64(1)<<((hash>>h.bloomShift)%ws)
	if word&mask != mask {
		return
	}
	i, ok := h.word32(h.buckets, uint64(hash%h.nbuckets))
	if !ok || i == 0 || i < h.symOffset {
		return
	}
	for n := 0; n < maxHashChain; n, i = n+1, i+1 {
		ch, ok := h.word32(h.chains, uint64(i-h.symOffset))
		if !ok {
			return
		}
		if ch|1 == hash|1 && h.nameIs(i, name) {
			fn(i)
		}
		if ch&1 != 0 {
			return
		}
	}
}

// nameIs reports whether .dynsym entry i is named name.
func (h *DynHash) nameIs(i uint32, name string) bool {
	t := h.syms
	if uint64(i+1)*uint64(t.EntSize) > uint64(len(t.Raw)) {
		return false
	}
	off := t.bo.Uint32(t.Raw[int(i)*t.EntSize:])
	return string(cStringBytes(t.strs, off)) == name
}

// Global returns the definition of name that the module's .dynsym gives
// (what its byName map would give, elfsym.go: the last STB_GLOBAL entry,
// else the first) and whether it is a global or weak code symbol.
func (h *DynHash) Global(name string) (addr uint64, global, ok bool) {
	var best rawSym
	bestIdx, bestGlobal := uint32(0), false
	h.lookup(name, func(i uint32) {
		e, def := h.syms.entry(int(i))
		if !def || e.typ == elf.STT_TLS || !knownSymType(e.typ) {
			return
		}
		// Chains are not in index order in a .hash table.
		isGlobal := e.bind == elf.STB_GLOBAL
		better := !ok || (isGlobal && (!bestGlobal || i > bestIdx)) || (!isGlobal && !bestGlobal && i < bestIdx)
		if better {
			best, bestIdx, bestGlobal, ok = e, i, isGlobal, true
		}
	})
	if !ok {
		return 0, false, false
	}
	return best.value, h.syms.isCode(best) && best.bind != elf.STB_LOCAL, true
}

// knownSymType reports the symbol types the tables keep.
func knownSymType(t elf.SymType) bool {
	switch t {
	case elf.STT_FUNC, elf.STT_GNU_IFUNC, elf.STT_OBJECT, elf.STT_TLS, elf.STT_NOTYPE:
		return true
	}
	return false
}
