package python

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// fuzzBase is where a fuzz input is mapped in the fake process.
const fuzzBase = 0x7f0000000000

// fuzzProcess is a process whose whole memory is one fuzz input at
// fuzzBase: _PyRuntime at its start, Py_Version and PyCode_Type at the
// offsets the input chose.
type fuzzProcess struct {
	mem  []byte
	syms map[string]uint64
}

var errUnmapped = errors.New("unmapped")

func (p *fuzzProcess) ReadMemory(addr uint64, b []byte) (int, error) {
	if addr < fuzzBase || addr-fuzzBase >= uint64(len(p.mem)) {
		return 0, errUnmapped
	}
	n := copy(b, p.mem[addr-fuzzBase:])
	if n < len(b) {
		return n, errUnmapped
	}
	return n, nil
}

func (p *fuzzProcess) SymbolAddress(name string) (uint64, bool) {
	a, ok := p.syms[name]
	return a, ok
}

// seedMemory is a CPython 3.11-like runtime: Py_Version at 0x100, an
// interpreter whose thread list points back into the input.
func seedMemory(version uint64) []byte {
	mem := make([]byte, 0x400)
	le := binary.LittleEndian
	le.PutUint64(mem[0x100:], version)
	l := layout311(version)
	le.PutUint64(mem[l.runtimeInterpretersHead:], fuzzBase+0x200)
	le.PutUint64(mem[0x200+l.interpThreadsHead:], fuzzBase+0x300)
	return mem
}

// FuzzReadStacks reads the Python stacks of a process whose memory is
// arbitrary bytes (a corrupt or hostile core): no panic, no endless walk,
// and every result within the caps.
func FuzzReadStacks(f *testing.F) {
	f.Add(seedMemory(0x030b02f0), uint16(0x100), uint16(0))
	f.Add(seedMemory(0x030c01f0), uint16(0x100), uint16(0x40))
	cookie := make([]byte, debugOffsetsSize)
	copy(cookie, debugCookie)
	binary.LittleEndian.PutUint64(cookie[8:], 0x030d05f0)
	f.Add(cookie, uint16(0), uint16(0))
	f.Add([]byte{}, uint16(0), uint16(0))
	f.Fuzz(func(t *testing.T, mem []byte, versionOff, codeTypeOff uint16) {
		fuzzbudget.Check(t, len(mem), fuzzbudget.Default, func() {
			p := &fuzzProcess{mem: mem, syms: map[string]uint64{
				"_PyRuntime":  fuzzBase,
				"Py_Version":  fuzzBase + uint64(versionOff),
				"PyCode_Type": fuzzBase + uint64(codeTypeOff),
			}}
			s, err := ReadStacks(p)
			if err != nil {
				if s != nil {
					t.Fatalf("ReadStacks returned stacks with error %v", err)
				}
				return
			}
			if len(s.Threads) > maxInterpreters*maxThreads {
				t.Fatalf("%d threads", len(s.Threads))
			}
			for _, th := range s.Threads {
				if len(th.Frames) > maxFrames {
					t.Fatalf("%d frames", len(th.Frames))
				}
			}
		})
	})
}

// FuzzLineAt decodes an arbitrary co_linetable (PEP 626 location table).
func FuzzLineAt(f *testing.F) {
	f.Add([]byte{0x80 | 13<<3 | 2, 0x02, 0xf8 | 1, 0x00}, 10, 3)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x7f}, 1, 100)
	f.Add([]byte{}, 0, 0)
	f.Fuzz(func(t *testing.T, table []byte, first, addrq int) {
		fuzzbudget.Check(t, len(table), fuzzbudget.Default, func() {
			lineAt(table, first, addrq)
		})
	})
}
