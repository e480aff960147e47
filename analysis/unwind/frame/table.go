// Package frame parses call frame information — .eh_frame (Linux Standard
// Base Core §10.6) and .debug_frame (DWARF 5 §6.4) — and runs the CFA
// programs of its entries (DWARF 5 §6.4.2) to produce the unwinding rules
// (a Row) in effect at an address.
//
// A Table finds the FDE covering an address through .eh_frame_hdr's sorted
// search table when one is given (LSB §10.6.2), else through an index of all
// FDEs built once. Parsed CIEs, FDEs and rows are cached, so unwinding a deep
// recursion costs one row evaluation per distinct pc. A Table is safe for
// concurrent use.
//
// All addresses here are link-time addresses; the caller subtracts the load
// bias first. Malformed input yields a *FormatError, never a panic.
package frame

import (
	"encoding/binary"
	"errors"
	"sort"
	"sync"

	"github.com/faultline-dev/faultline/analysis/internal/cursor"
)

// Kind says which section a Table reads.
type Kind uint8

const (
	EHFrame    Kind = iota // .eh_frame
	DebugFrame             // .debug_frame
)

func (k Kind) String() string {
	if k == EHFrame {
		return ".eh_frame"
	}
	return ".debug_frame"
}

// Cache bounds: a corrupt or huge section cannot make the caches grow without
// limit; when full they are cleared and refilled.
const (
	maxCachedCIEs = 4096
	maxCachedFDEs = 1 << 16
	maxCachedRows = 1 << 16
)

// ErrNoFDE is returned when no FDE covers an address.
var ErrNoFDE = errors.New("no FDE covers address")

// Table is one frame section with its lookup structures and caches.
type Table struct {
	kind    Kind
	data    []byte
	addr    uint64 // link-time address of data[0]
	order   binary.ByteOrder
	ptrSize int

	hdr     []byte // .eh_frame_hdr, if any
	hdrAddr uint64

	// Bases for DW_EH_PE_textrel / DW_EH_PE_datarel in .eh_frame entries, and
	// a reader for DW_EH_PE_indirect pointers; all optional.
	TextBase, DataBase uint64
	Deref              func(linkAddr uint64) (uint64, error)
	// Index, when set, keeps the FDE index across processes (indexstore.go).
	Index IndexStore

	mu       sync.Mutex
	cies     map[uint64]*CIE
	fdes     map[uint64]*FDE
	rows     map[uint64]*Row
	index    []indexEntry // sorted by begin; built on first need
	indexed  bool
	indexErr error
	hdrTable *hdrTable // decoded .eh_frame_hdr header, nil if absent or unusable
	hdrDone  bool
}

type indexEntry struct {
	begin, end uint64
	off        uint64
}

// NewEHFrame returns a Table over .eh_frame bytes loaded at link-time address
// addr, with the optional .eh_frame_hdr section (hdr, hdrAddr).
func NewEHFrame(data []byte, addr uint64, hdr []byte, hdrAddr uint64, order binary.ByteOrder, ptrSize int) *Table {
	t := newTable(EHFrame, data, addr, order, ptrSize)
	t.hdr, t.hdrAddr = hdr, hdrAddr
	return t
}

// NewDebugFrame returns a Table over .debug_frame bytes. addr is only used
// for messages: .debug_frame holds absolute addresses.
func NewDebugFrame(data []byte, addr uint64, order binary.ByteOrder, ptrSize int) *Table {
	return newTable(DebugFrame, data, addr, order, ptrSize)
}

func newTable(kind Kind, data []byte, addr uint64, order binary.ByteOrder, ptrSize int) *Table {
	if order == nil {
		order = binary.LittleEndian
	}
	if ptrSize != 4 {
		ptrSize = 8
	}
	return &Table{
		kind: kind, data: data, addr: addr, order: order, ptrSize: ptrSize,
		cies: map[uint64]*CIE{}, fdes: map[uint64]*FDE{}, rows: map[uint64]*Row{},
	}
}

func (t *Table) bases(fn uint64) pointerBases {
	return pointerBases{section: t.addr, text: t.TextBase, data: t.DataBase, fn: fn}
}

func (t *Table) deref(addr uint64) (uint64, error) {
	if t.Deref == nil {
		return 0, errors.New("indirect pointer with no memory to read it")
	}
	return t.Deref(addr)
}

// FDEFor returns the FDE covering link-time address pc, or ErrNoFDE.
func (t *Table) FDEFor(pc uint64) (*FDE, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fdeFor(pc)
}

func (t *Table) fdeFor(pc uint64) (*FDE, error) {
	if off, ok := t.searchHdr(pc); ok {
		if fde, err := t.fdeAt(off); err == nil && pc >= fde.Begin && pc < fde.End {
			return fde, nil
		}
		// A stale or corrupt header: fall through to the full index.
	}
	if !t.indexed {
		t.loadOrBuildIndex()
	}
	i := sort.Search(len(t.index), func(i int) bool { return t.index[i].begin > pc }) - 1
	// FDEs may overlap or nest (rarely); look back over those starting at or before pc.
	for j := i; j >= 0 && j > i-8; j-- {
		e := t.index[j]
		if pc >= e.begin && pc < e.end {
			return t.fdeAt(e.off)
		}
	}
	if t.indexErr != nil {
		return nil, t.indexErr
	}
	return nil, ErrNoFDE
}

// buildIndex walks every entry once and records each FDE's range. A malformed
// entry ends the walk; the FDEs before it stay usable and the error is kept.
func (t *Table) buildIndex() {
	t.indexed = true
	for off := 0; off < len(t.data); {
		h, err := t.readHeader(off)
		if err != nil {
			t.indexErr = err
			break
		}
		if h.isTerm {
			if t.kind == EHFrame {
				break
			}
			off = h.end
			continue
		}
		if !h.isCIE {
			if fde, err := t.parseFDE(h); err == nil {
				if fde.End > fde.Begin {
					t.index = append(t.index, indexEntry{fde.Begin, fde.End, h.off})
				}
			} else if t.indexErr == nil {
				t.indexErr = err
			}
		}
		off = h.end
	}
	sort.SliceStable(t.index, func(i, j int) bool { return t.index[i].begin < t.index[j].begin })
}

// hdrTable is the decoded header of .eh_frame_hdr (LSB §10.6.2).
type hdrTable struct {
	tableEnc byte
	count    int
	tableOff int // offset of the first table entry in hdr
	entSize  int // size of one table field
}

// searchHdr binary-searches .eh_frame_hdr's table for the FDE covering pc and
// returns its .eh_frame offset.
func (t *Table) searchHdr(pc uint64) (uint64, bool) {
	if !t.hdrDone {
		t.hdrDone = true
		t.hdrTable = t.parseHdr()
	}
	h := t.hdrTable
	if h == nil || h.count == 0 {
		return 0, false
	}
	read := func(i, field int) uint64 {
		c := cursor.New(t.hdr, t.order, 0)
		c.Seek(h.tableOff + (2*i+field)*h.entSize)
		v, _ := readEncoded(c, h.tableEnc, t.ptrSize, pointerBases{section: t.hdrAddr, data: t.hdrAddr})
		return v
	}
	i := sort.Search(h.count, func(i int) bool { return read(i, 0) > pc }) - 1
	if i < 0 {
		return 0, false
	}
	fdeAddr := read(i, 1)
	if fdeAddr < t.addr || fdeAddr-t.addr >= uint64(len(t.data)) {
		return 0, false
	}
	return fdeAddr - t.addr, true
}

// parseHdr decodes .eh_frame_hdr: version 1, eh_frame_ptr_enc, fde_count_enc,
// table_enc, eh_frame_ptr, fde_count, then the sorted (initial location, FDE
// address) pairs. It returns nil when the table is absent or not searchable.
func (t *Table) parseHdr() *hdrTable {
	if len(t.hdr) < 4 || t.hdr[0] != 1 {
		return nil
	}
	c := cursor.New(t.hdr, t.order, 0)
	c.Skip(1)
	ptrEnc, countEnc, tableEnc := c.U8(), c.U8(), c.U8()
	b := pointerBases{section: t.hdrAddr, data: t.hdrAddr}
	readEncoded(c, ptrEnc, t.ptrSize, b)
	if countEnc == DW_EH_PE_omit || tableEnc == DW_EH_PE_omit {
		return nil
	}
	count, _ := readEncoded(c, countEnc, t.ptrSize, b)
	size := encodedSize(tableEnc, t.ptrSize)
	if c.Err() != nil || size == 0 || tableEnc&DW_EH_PE_indirect != 0 {
		return nil
	}
	if count > uint64(c.Len()/(2*size)) {
		return nil // count beyond the section: do not trust the table
	}
	return &hdrTable{tableEnc: tableEnc, count: int(count), tableOff: c.Off, entSize: size}
}
