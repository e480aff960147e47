package analysis

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"

	"github.com/faultline-dev/faultline/analysis/cuda"

	"github.com/faultline-dev/faultline/analysis/classify"
	"github.com/faultline-dev/faultline/analysis/disasm"
	"github.com/faultline-dev/faultline/analysis/elfcore"
	"github.com/faultline-dev/faultline/analysis/python"
)

// Session is an opened dump: its crash model, and the process memory behind
// it for views that read more (disassembly around a pc, values).
type Session struct {
	Crash *Crash
	p     *process
}

// Open reads the crash artifact at path into the crash model. It fails only
// when the file cannot be read as any supported format; everything else that
// is missing or damaged becomes a Problem next to partial results.
func Open(path string, opt Options) (*Crash, error) {
	s, err := OpenSession(path, opt)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Crash, nil
}

// OpenSession is Open that keeps the dump open; Close releases it.
func OpenSession(path string, opt Options) (*Session, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	if cuda.IsCoreDump(path) {
		c, err := openCUDACore(path, opt)
		if err != nil {
			return nil, err
		}
		classify.Classify(c, nil)
		return &Session{Crash: c}, nil
	}
	if IsGPULog(path) {
		c, err := openGPULog(path)
		if err != nil {
			return nil, err
		}
		classify.Classify(c, nil)
		return &Session{Crash: c}, nil
	}
	if s, ok, err := openLog(path, opt); ok {
		return s, err
	}
	core, err := elfcore.Open(path)
	if err != nil {
		var fe *elfcore.FormatError
		if errors.As(err, &fe) {
			return nil, fmt.Errorf("%s is not a core dump faultline can read: %w", path, err)
		}
		return nil, err
	}
	p, err := newProcess(core, opt)
	if err != nil {
		core.Close()
		return nil, err
	}
	crash := p.crash(path)
	python.Interleave(crash, p)
	if opt.SanitizerLog != "" {
		attachSanitizerLog(crash, opt.SanitizerLog)
	}
	classify.Classify(crash, p)
	return &Session{Crash: crash, p: p}, nil
}

// Close releases the dump and the files it mapped.
func (s *Session) Close() error {
	if s == nil || s.p == nil {
		return nil
	}
	s.p.close()
	err := s.p.core.Close()
	s.p = nil
	return err
}

// ReadMemory reads the crashed process's memory at addr.
func (s *Session) ReadMemory(addr uint64, b []byte) (int, error) {
	if s.p == nil {
		return 0, errNoMemory
	}
	return s.p.ReadMemory(addr, b)
}

// Disassemble lists up to before instructions ahead of pc, the instruction
// at pc, and up to after instructions following it, decoding from the start
// of pc's function (x86 cannot be decoded backwards).
func (s *Session) Disassemble(pc uint64, before, after int) []disasm.Instruction {
	if s.p == nil {
		return nil // a log: no memory
	}
	if s.p.core.Machine == elf.EM_AARCH64 {
		return s.p.disassembleARM64(pc, before, after)
	}
	start := pc
	if _, low := s.p.symbolFor(pc); low != 0 && low <= pc && pc-low < 1<<16 {
		start = low
	}
	code := make([]byte, pc-start+uint64(after+1)*15)
	n, _ := s.p.ReadMemory(start, code)
	all := disasm.Window(code[:n], start, pc+uint64(after+1)*15, 1<<16, s.p.symbolFor)
	at := -1
	for i, in := range all {
		if in.PC == pc {
			at = i
			break
		}
	}
	if at < 0 {
		return nil
	}
	lo := max(0, at-before)
	hi := min(len(all), at+after+1)
	return all[lo:hi]
}
