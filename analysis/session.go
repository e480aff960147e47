package analysis

import (
	"errors"

	"github.com/faultline-dev/faultline/analysis/classify"
	"github.com/faultline-dev/faultline/analysis/cuda"
	"github.com/faultline-dev/faultline/analysis/debuginfo/variables"
	"github.com/faultline-dev/faultline/analysis/disasm"
	"github.com/faultline-dev/faultline/analysis/input"
	"github.com/faultline-dev/faultline/analysis/native"
)

// Options say where to find the files a dump refers to (see native.Options).
type Options = native.Options

// ModulePool lends one core's opened modules (files, symbols, DWARF
// indexes, unwind sections) to the next core of the same program; set
// Options.Pool to use one. One goroutine at a time; Close it after the
// sessions that used it.
type ModulePool = native.Pool

// NewModulePool returns an empty pool.
func NewModulePool() *ModulePool { return native.NewPool() }

// Value is an argument or local variable of a frame (see variables.Value).
type Value = variables.Value

// errNoMemory is the error of the Session methods that read process memory
// when the dump is a log or a GPU core: it holds no host process memory.
var errNoMemory = errors.New("this dump is a log: it holds no process memory")

// Session is an opened dump: its crash model, and the process memory behind
// it for views that read more (disassembly around a pc, values).
type Session struct {
	Crash  *Crash
	p      *native.Process // nil for logs and GPU cores
	gpu    *cuda.CoreDump  // a GPU core dump: its global memory
	pooled bool            // opened with Options.Pool
}

// Pooled reports whether the session was opened with a module pool.
func (s *Session) Pooled() bool { return s != nil && s.pooled }

// Open reads the crash artifact at path ("-": standard input) into the
// crash model. It fails only when the file cannot be read as any supported
// format; everything else that is missing or damaged becomes a Problem next
// to partial results.
func Open(path string, opt Options) (*Crash, error) {
	s, err := OpenSession(path, opt)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Crash, nil
}

// OpenSession is Open that keeps the dump open; Close releases it. The
// dump is opened, decompressed and sniffed once (package input), read by
// the first format of the formats table that takes it, and classified
// once, here.
func OpenSession(path string, opt Options) (*Session, error) {
	in, err := input.Open(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	s, err := openInput(in, opt)
	if err != nil {
		return nil, err
	}
	if in.Damaged != "" {
		s.Crash.Problems = append(s.Crash.Problems, Problem{Message: in.Damaged})
	}
	addReport(s.Crash, in.Report)
	s.pooled = opt.Pool != nil && s.p != nil
	if s.Crash.Classification == nil {
		if s.p != nil {
			classify.Classify(s.Crash, s.p)
		} else {
			classify.Classify(s.Crash, nil)
		}
	}
	return s, nil
}

// Close releases the dump and the files it mapped.
func (s *Session) Close() error {
	if s == nil || s.p == nil {
		if s != nil {
			s.gpu = nil
		}
		return nil
	}
	err := s.p.Close()
	s.p = nil
	return err
}

// ReadMemory reads the crashed process's memory at addr (of a GPU core
// dump: the global memory it saved).
func (s *Session) ReadMemory(addr uint64, b []byte) (int, error) {
	if s.p == nil && s.gpu != nil {
		return s.gpu.ReadGlobal(addr, b)
	}
	if s.p == nil {
		return 0, errNoMemory
	}
	return s.p.ReadMemory(addr, b)
}

// Disassemble lists up to before instructions ahead of pc, the instruction
// at pc, and up to after instructions following it.
func (s *Session) Disassemble(pc uint64, before, after int) []disasm.Instruction {
	if s.p == nil {
		return nil // a log: no memory
	}
	return s.p.Disassemble(pc, before, after)
}

// FrameValues reads the arguments and locals of frame frameIndex (an index
// into the thread's Frames, inline levels included) of thread threadID
// (see native.Process.FrameValues). A log has no values.
func (s *Session) FrameValues(threadID, frameIndex int) ([]Value, error) {
	if s == nil || s.p == nil || s.Crash == nil {
		return nil, errNoMemory
	}
	return s.p.FrameValues(s.Crash, threadID, frameIndex)
}

// addReport adds what the crash reporter recorded with the core (an apport
// report, an ABRT problem directory) to c: which reporter, the packages at
// their installed versions, and the program's path and command line when
// the core did not say them.
func addReport(c *Crash, r *input.Report) {
	if r == nil {
		return
	}
	c.Dump.Report = r.Kind
	c.Packages = append(c.Packages, r.Packages...)
	if c.Dump.Executable == "" {
		c.Dump.Executable = r.Executable
	}
	if c.Dump.Command == "" {
		c.Dump.Command = r.Command
	}
}

// IsProblemDirectory reports whether dir is a crash reporter's directory
// that opens as one dump (an ABRT problem directory holding a coredump).
func IsProblemDirectory(dir string) bool { return input.IsABRTDir(dir) }
