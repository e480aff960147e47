// Package classify reads a crash the way a person debugging it by hand
// does: it tells a NULL dereference from a wild or freed pointer by the
// faulting instruction and its registers, recognises aborts (assertions,
// malloc's checks, uncaught C++ exceptions), exit-time and signal-handler
// crashes, stack overflows, deadlocks and data-race red flags, picks the
// first frame that is the program's own, and writes down the evidence.
//
// It fills the model's "crash" section (model.Classification). It never
// imports package analysis: what it needs from the opened dump comes
// through the Process interface, and a nil Process (a crash read from a
// text log) classifies from the model alone.
package classify

import (
	"github.com/faultline-dev/faultline/analysis/model"
)

// Process is the crashed process's memory and symbols.
type Process interface {
	// ReadMemory reads the process's memory at addr; it returns how many
	// bytes it read and an error when that is fewer than len(p).
	ReadMemory(addr uint64, p []byte) (int, error)
	// SymbolAddress returns the run-time address of a global symbol by its
	// (mangled) name, e.g. "__abort_msg".
	SymbolAddress(name string) (uint64, bool)
}

// ThreadRegisters is implemented by a Process that can give the registers
// of every thread (the model keeps only the crashing thread's); lock
// analysis needs them.
type ThreadRegisters interface {
	// ThreadRegisters returns thread lwp's registers by gdb's names ("rdi",
	// "orig_rax", ...).
	ThreadRegisters(lwp int) (map[string]uint64, bool)
}

// DataSymbols is implemented by a Process that can name data addresses,
// e.g. global mutexes.
type DataSymbols interface {
	// DataSymbols names the object symbol containing each address ("name"
	// or "name+0x10"), "" where it knows none.
	DataSymbols(addrs []uint64) []string
}

// Mappings is implemented by a Process that knows the crashed process's
// address map (a core's program headers and NT_FILE).
type Mappings interface {
	// MappingAt describes the mapping holding addr; false when nothing is
	// mapped there.
	MappingAt(addr uint64) (model.Mapping, bool)
}

// Classify fills c.Classification from the model and, when p is not nil,
// the process's memory. It never fails: what it cannot tell it leaves as
// kind "unknown" with the evidence it has.
func Classify(c *model.Crash, p Process) {
	if c == nil {
		return
	}
	a := &analyzer{c: c, p: p}
	c.Classification = a.run()
}

// analyzer holds one classification's working state.
type analyzer struct {
	c   *model.Crash
	p   Process
	cls *model.Classification

	frames []model.Frame // the crashing thread's frames
	// noForeignNote keeps where() from naming the library the crash is
	// inside, when the summary says it another way.
	noForeignNote bool
	start         int    // first frame past a re-raising handler
	f             *fault // the fault that killed the process, if one did
}

func (a *analyzer) run() *model.Classification {
	a.cls = &model.Classification{Kind: model.KindUnknown, Context: model.ContextRuntime, CulpritFrame: -1,
		Evidence: []string{}}
	if t := a.c.CrashingThread(); t != nil {
		a.frames = t.Frames
	}
	a.start = a.reraiseStart()
	a.f = a.readFault()
	a.runtimes().JVMHandlerNote()
	a.cls.CulpritFrame = a.culprit()
	a.foreignEvidence()
	if a.c.GPU != nil {
		a.gpu()
		return a.cls
	}
	a.cls.Context = a.context()
	if !a.cutBeforeSignal() {
		a.classifyKind()
		a.noteCutData()
	}
	a.threads()
	a.cls.Signature = a.signature()
	if a.cls.Summary == "" {
		a.cls.Summary = a.defaultSummary()
	}
	return a.cls
}

// evidence appends one line of evidence.
func (a *analyzer) evidence(format string, args ...any) {
	a.cls.Evidence = append(a.cls.Evidence, sprintf(format, args...))
}

// mappingAt describes the mapping holding addr: mapped is false when
// nothing is mapped there, known false when the input has no address map
// (a log).
func (a *analyzer) mappingAt(addr uint64) (m model.Mapping, mapped, known bool) {
	mp, ok := a.p.(Mappings)
	if !ok || a.p == nil {
		return model.Mapping{}, false, false
	}
	m, mapped = mp.MappingAt(addr)
	return m, mapped, true
}

// readUint64 reads a little-endian word of process memory.
func (a *analyzer) readUint64(addr uint64) (uint64, bool) {
	if a.p == nil {
		return 0, false
	}
	var b [8]byte
	if n, _ := a.p.ReadMemory(addr, b[:]); n != 8 {
		return 0, false
	}
	return le64(b[:]), true
}

func (a *analyzer) readUint32(addr uint64) (uint32, bool) {
	if a.p == nil {
		return 0, false
	}
	var b [4]byte
	if n, _ := a.p.ReadMemory(addr, b[:]); n != 4 {
		return 0, false
	}
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24, true
}

// readCString reads a NUL-terminated string of at most max bytes.
func (a *analyzer) readCString(addr uint64, max int) (string, bool) {
	if a.p == nil || addr == 0 {
		return "", false
	}
	buf := make([]byte, 0, 64)
	chunk := make([]byte, 64)
	for len(buf) < max {
		n, _ := a.p.ReadMemory(addr+uint64(len(buf)), chunk[:min(len(chunk), max-len(buf))])
		if n == 0 {
			break
		}
		for i := 0; i < n; i++ {
			if chunk[i] == 0 {
				return string(append(buf, chunk[:i]...)), true
			}
		}
		buf = append(buf, chunk[:n]...)
	}
	return string(buf), len(buf) > 0
}
