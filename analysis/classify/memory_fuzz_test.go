package classify

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// fuzzBase is where a fuzz input is mapped in the fake process: the
// crashing thread's stack pointer and every symbol point into it.
const fuzzBase = 0x7ffd00000000

// memProcess is a process whose memory is one fuzz input at fuzzBase,
// with every symbol, mapping and code address inside it.
type memProcess struct{ mem []byte }

var errUnmapped = errors.New("unmapped")

func (p *memProcess) ReadMemory(addr uint64, b []byte) (int, error) {
	if addr < fuzzBase || addr-fuzzBase >= uint64(len(p.mem)) {
		return 0, errUnmapped
	}
	n := copy(b, p.mem[addr-fuzzBase:])
	if n < len(b) {
		return n, errUnmapped
	}
	return n, nil
}

func (p *memProcess) SymbolAddress(string) (uint64, bool) { return fuzzBase + 0x40, true }

func (p *memProcess) MappingAt(addr uint64) (model.Mapping, bool) {
	if addr < fuzzBase || addr-fuzzBase >= uint64(len(p.mem)) {
		return model.Mapping{}, false
	}
	return model.Mapping{Lo: fuzzBase, Hi: fuzzBase + uint64(len(p.mem)), Perm: "r--", File: "/usr/lib/x.so", Section: ".rodata"}, true
}

func (p *memProcess) Locate(addr uint64) []model.Frame {
	return []model.Frame{{Function: "core::fmt::num::imp::<impl core::fmt::Display for usize>::fmt"}}
}

// fuzzStacks are crashing stacks whose classification reads the memory:
// a Rust panic, ASan's report, libstdc++'s and CPython's fatal-error
// calls, a CFI handler, a handler that returned, a call to no code.
var fuzzStacks = [][]string{
	{"abort", "core::panicking::panic_fmt", "main::f"},
	{"abort", "__sanitizer::Die", "__asan::ReportGenericError", "__asan_report_load8", "f"},
	{"abort", "std::__glibcxx_assert_fail", "f"},
	{"abort", "__gnu_debug::_Error_formatter::_M_error", "f"},
	{"abort", "_Py_FatalErrorFunc", "_Py_FatalError_TstateNULL", "f", "exit"},
	{"abort", "__ubsan_handle_cfi_check_fail_abort", "f"},
	{"f", "g"},
}

// FuzzClassifyMemory classifies crashes whose process memory is arbitrary
// bytes (a corrupt or hostile core): no panic, and every read bounded.
func FuzzClassifyMemory(f *testing.F) {
	seed := make([]byte, 0x400)
	binary.LittleEndian.PutUint64(seed[0x10:], fuzzBase+0x100)
	copy(seed[0x100:], "heap-use-after-free\x00")
	f.Add(seed, uint8(0), uint8(6))
	f.Add(seed, uint8(1), uint8(6))
	f.Add(seed, uint8(6), uint8(11))
	f.Fuzz(func(t *testing.T, mem []byte, stack, signal uint8) {
		if len(mem) > 1<<16 {
			return
		}
		p := &memProcess{mem: mem}
		c := fuzzCrash(fuzzStacks[int(stack)%len(fuzzStacks)], int(signal)%32)
		fuzzbudget.Check(t, len(mem), fuzzbudget.Default, func() { Classify(c, p) })
		if c.Classification == nil || c.Classification.Kind == "" {
			t.Fatal("no classification")
		}
	})
}

// fuzzCrash is a crash of one thread with the frames named, its stack
// pointer at fuzzBase, and signal signo sent by the process itself.
func fuzzCrash(names []string, signo int) *model.Crash {
	th := model.Thread{ID: 7, Crashed: true}
	for i, n := range names {
		f := model.Frame{Index: i, Function: n, Addr: fuzzBase + uint64(0x80*i), PC: "0x1", CFA: fuzzBase + 0x200}
		if i == 0 {
			f.Regs = map[string]uint64{"rsp": fuzzBase, "rip": fuzzBase + 0x20, "orig_rax": ^uint64(0), "rdi": 0}
		}
		th.Frames = append(th.Frames, f)
	}
	return &model.Crash{Dump: model.Dump{Format: "elf-core", Arch: "x86_64", PID: 7}, Threads: []model.Thread{th}, CrashingThreadID: 7,
		Signal: &model.Signal{Number: signo, Name: model.SignalName(signo), Code: "SI_TKILL", Sender: 7},
		Instruction: &model.Instruction{PC: "0x7ffd00000020", Bytes: "48 8b 47 10", Text: "mov 0x10(%rdi),%rax", MemoryOperand: "0x10(%rdi)",
			EffectiveAddress: "0x10", Registers: map[string]string{"rdi": "0x0"}}}
}
