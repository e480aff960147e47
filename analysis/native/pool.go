package native

import (
	"encoding/hex"
	"sync"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/analysis/debuginfo/symbolize"
	"github.com/faultline-dev/faultline/analysis/unwind"
)

// Pool keeps what one core's modules cost to open — their binaries and
// debug files, symbol tables, DWARF indexes and line tables, unwind
// sections — for the next core of the same program (many cores of one
// job, analyzed together): a module whose file and build-id were seen
// before is not opened or indexed again. A Pool is used by one goroutine
// at a time; Close releases what it holds, after the processes that used
// it are closed.
type Pool struct {
	objects map[string]*pooledObject
	gen     int // opens marked so far (Mark)
	reused  int // files the latest marked open took from the pool
}

// Reused is how many files the latest marked open took from the pool
// instead of opening them.
func (pl *Pool) Reused() int {
	if pl == nil {
		return 0
	}
	return pl.reused
}

// NewPool returns an empty pool.
func NewPool() *Pool { return &Pool{objects: map[string]*pooledObject{}} }

// Len is the number of binaries the pool holds.
func (pl *Pool) Len() int { return len(pl.objects) }

// Close releases every pooled file.
func (pl *Pool) Close() {
	if pl == nil {
		return
	}
	for _, po := range pl.objects {
		po.close()
	}
	pl.objects = nil
}

// pooledObject is one binary as a process opened it: the files, what
// finding its debug file said, and, once a stack reached it, its symbols
// and unwind sections.
type pooledObject struct {
	obj, dbg *object.Object
	problems []string // findDebug's problems, repeated for each core

	mu       sync.Mutex // a process may symbolize two modules of one file at once
	ready    bool       // syms, uw and fetchErr are set
	fetchErr error
	syms     *symbolize.Symbols
	uw       unwind.Module // the link-time parts: sections and entry
	used     int           // the latest marked open that took it (Pool.Mark)
}

func (po *pooledObject) close() {
	po.syms.Close()
	if po.dbg != nil && po.dbg != po.obj {
		po.dbg.Close()
	}
	po.obj.Close()
}

// Mark starts an open that uses the pool: what it takes from the pool or
// adds to it is marked as its own, for DropUnused.
func (pl *Pool) Mark() {
	if pl != nil {
		pl.gen++
		pl.reused = 0
	}
}

// DropUnused closes the pooled files the latest marked open did not use,
// once the processes of earlier opens are closed: a server that opens
// dump after dump keeps the files of the one it shows, not of every dump
// it ever showed. It returns how many it closed.
func (pl *Pool) DropUnused() int {
	if pl == nil {
		return 0
	}
	n := 0
	for k, po := range pl.objects {
		if po.used < pl.gen {
			po.close()
			delete(pl.objects, k)
			n++
		}
	}
	return n
}

// StoreCache writes what the pooled files decompressed so far to the
// index cache (object.Object.StoreCache), as closing them would.
func (pl *Pool) StoreCache() {
	if pl == nil {
		return
	}
	for _, po := range pl.objects {
		po.obj.StoreCache()
		if po.dbg != nil && po.dbg != po.obj {
			po.dbg.StoreCache()
		}
	}
}

func poolKey(file string, buildID []byte) string { return file + "\x00" + hex.EncodeToString(buildID) }

// fromPool gives module m the pooled binary opened from file, if there is
// one; it reports whether it did.
func (p *Process) fromPool(m *module, file string) bool {
	if p.opt.Pool == nil {
		return false
	}
	po := p.opt.Pool.objects[poolKey(file, m.buildID)]
	if po == nil {
		return false
	}
	m.file, m.obj, m.dbg, m.pooled, m.locator = file, po.obj, po.dbg, po, p.locator
	po.used = p.opt.Pool.gen
	p.opt.Pool.reused++
	p.setBias(m)
	for _, pr := range po.problems {
		p.problem(m.path, "%s", pr)
	}
	return true
}

// toPool records module m's freshly opened binary (and what finding its
// debug file said) in the pool.
func (p *Process) toPool(m *module, problems []string) {
	if p.opt.Pool == nil || m.obj == nil {
		return
	}
	m.pooled = &pooledObject{obj: m.obj, dbg: m.dbg, problems: problems, used: p.opt.Pool.gen}
	p.opt.Pool.objects[poolKey(m.file, m.buildID)] = m.pooled
}

// initFromPool sets m's symbols and unwind sections from the pool when an
// earlier core built them; else, after init built them, initDone stores
// them there.
func (m *module) initFromPool() bool {
	po := m.pooled
	if po == nil {
		return false
	}
	po.mu.Lock()
	defer po.mu.Unlock()
	if !po.ready {
		return false
	}
	m.dbg, m.syms, m.fetchErr = po.dbg, po.syms, po.fetchErr
	m.uw.EHFrame, m.uw.EHFrameHdr, m.uw.DebugFrame, m.uw.Entry = po.uw.EHFrame, po.uw.EHFrameHdr, po.uw.DebugFrame, po.uw.Entry
	return true
}

func (m *module) initDone() {
	if po := m.pooled; po != nil {
		po.mu.Lock()
		po.dbg, po.syms, po.uw, po.fetchErr, po.ready = m.dbg, m.syms, *m.uw, m.fetchErr, true
		po.mu.Unlock()
	}
}
