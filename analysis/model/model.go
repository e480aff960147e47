// Package model defines the crash model (schema faultline.crash/v1) that
// every input turns into: threads, frames with every inlined level, modules,
// the signal and faulting instruction, the classification, and problems.
// Package analysis re-exports these types; they live here so that the
// packages analysis uses (classify, report) can share them without a cycle.
package model

// Schema is the value of Crash.Schema.
const Schema = "faultline.crash/v1"

// Crash is the crash model that `faultline analyze --json` prints.
type Crash struct {
	Schema           string   `json:"schema"`
	Dump             Dump     `json:"dump"`
	Signal           *Signal  `json:"signal,omitempty"`
	CrashingThreadID int      `json:"crashingThread"` // the thread CrashingThread returns (0: none)
	Threads          []Thread `json:"threads"`
	Modules          []Module `json:"modules"`
	// Classification is the "crash" section: kind, context, culprit, evidence.
	Classification *Classification `json:"crash,omitempty"`
	Instruction    *Instruction    `json:"instruction,omitempty"`
	GPU            *GPU            `json:"gpu,omitempty"`
	// Sanitizer is the sanitizer's report of the crash, when its log was given.
	Sanitizer *SanitizerReport `json:"sanitizer,omitempty"`
	// Packages are the distribution packages the crash reporter recorded
	// with the core (Dump.Report says which reporter), the program's first.
	Packages []Package `json:"packages,omitempty"`
	Problems []Problem `json:"problems"`
}

// Dump describes the artifact that was opened.
type Dump struct {
	Path       string `json:"path"`
	Format     string `json:"format"` // elf-core, cuda-core, gdb-log, ...
	Arch       string `json:"arch"`
	Executable string `json:"executable,omitempty"`
	PID        int    `json:"pid,omitempty"`
	Command    string `json:"command,omitempty"`
	// Incomplete says what a cut-short dump lacks; nil when it is whole.
	Incomplete *Incomplete `json:"incomplete,omitempty"`
	// Report is the crash reporter whose container the core came in:
	// "apport" (an apport report, /var/crash/*.crash) or "abrt" (an ABRT
	// problem directory); "" for a core on its own.
	Report string `json:"report,omitempty"`
}

// Incomplete is what a truncated core (RLIMIT_CORE, a full disk, an
// interrupted copy) lost that the crash's kind could rest on.
type Incomplete struct {
	// NotesCut: the notes are cut short, so threads, registers, the
	// signal's details (NT_SIGINFO) or the mappings past the cut are absent.
	NotesCut bool `json:"notesCut,omitempty"`
	// CrashingStackAbsent: the crashing thread's stack memory is cut off.
	CrashingStackAbsent bool `json:"crashingStackAbsent,omitempty"`
	// FaultingCodeAbsent: the memory at the crashing thread's pc is cut off.
	FaultingCodeAbsent bool `json:"faultingCodeAbsent,omitempty"`
}

// Signal is the signal that ended the process.
type Signal struct {
	Number  int    `json:"number"`
	Name    string `json:"name"`
	Code    string `json:"code,omitempty"`
	Address string `json:"address,omitempty"`
	// Sender is the pid that sent the signal, for signals sent by kill/tgkill.
	Sender int `json:"sender,omitempty"`
	// SenderUID is the sender's real uid (si_uid), for signals sent by
	// kill/tgkill/sigqueue; nil when the signal was not sent.
	SenderUID *int `json:"senderUid,omitempty"`
	// Syscall is the system call a seccomp filter refused, for SIGSYS
	// with si_code SYS_SECCOMP.
	Syscall *Syscall `json:"syscall,omitempty"`
}

// Thread is one thread (LWP) of the process.
type Thread struct {
	ID      int     `json:"id"`
	Crashed bool    `json:"crashed"`
	Name    string  `json:"name,omitempty"`
	Frames  []Frame `json:"frames"`
	// Truncated says why the unwind stopped early, if it did.
	Truncated string `json:"truncated,omitempty"`
}

// Trust says how a frame's caller was recovered, as gdb and elfutils record it.
type Trust string

const (
	TrustContext      Trust = "context"       // registers from the core (frame 0)
	TrustCFI          Trust = "cfi"           // DWARF call frame information
	TrustFramePointer Trust = "frame-pointer" // rbp chain
	TrustScan         Trust = "scan"          // stack scanning for return addresses
	TrustSignal       Trust = "signal"        // ucontext saved by the kernel on a signal frame
)

// Frame is one entry of a thread's backtrace, as gdb's `bt` lists them: one
// per inline level, and a "<signal handler called>" entry across signal frames.
type Frame struct {
	Index    int    `json:"index"`
	PC       string `json:"pc"`
	Module   string `json:"module,omitempty"`
	Function string `json:"function,omitempty"`
	File     string `json:"file,omitempty"`
	// CompDir is the DW_AT_comp_dir of the unit File belongs to: where the
	// compiler ran, so a relative File is CompDir/File (gdb's first guess).
	CompDir string `json:"-"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Inlined bool   `json:"inlined"`
	// Trust is how the physical frame was recovered; inline levels share it.
	Trust  Trust  `json:"trust,omitempty"`
	Source string `json:"source,omitempty"`
	// Language is "python" for a Python-level frame (from a faulthandler
	// log, a traceback, or the interpreter's frames in a core); empty for
	// native frames.
	Language string `json:"language,omitempty"`
	// Offset is the PC's offset from the start of Function's symbol, when known.
	Offset uint64 `json:"-"`
	// Addr is PC as a number, for code that needs it.
	Addr uint64 `json:"-"`
	// CFA is the canonical frame address of the physical frame (0 if unknown).
	CFA uint64 `json:"-"`
	// Regs holds the registers recovered for this physical frame (by name).
	Regs map[string]uint64 `json:"-"`
	// Signal marks the synthetic "<signal handler called>" entry.
	Signal bool `json:"-"`
}

// SignalFrameName is the Function of the synthetic signal-frame entry.
const SignalFrameName = "<signal handler called>"

// Module is one mapped ELF object.
type Module struct {
	Path      string `json:"path"`
	BuildID   string `json:"buildId,omitempty"`
	Start     string `json:"start"`
	End       string `json:"end"`
	Symbols   string `json:"symbols"` // dwarf, symtab, none
	DebugFile string `json:"debugFile,omitempty"`
	// File is the file on disk that matched the core (build-id checked), when
	// it differs from Path or Path is not on this machine.
	File      string     `json:"file,omitempty"`
	Component *Component `json:"component,omitempty"`
	// Bias is the load bias (runtime address - link-time address).
	Bias uint64 `json:"-"`
	// Lo and Hi are Start and End as numbers.
	Lo, Hi uint64 `json:"-"`
}

// Component is the source component a module was built from.
type Component struct {
	Name     string `json:"name,omitempty"`
	Version  string `json:"version,omitempty"`
	Repo     string `json:"repo,omitempty"`
	Revision string `json:"revision,omitempty"`
}

// Instruction is the faulting instruction of the crashing thread.
type Instruction struct {
	PC               string            `json:"pc"`
	Text             string            `json:"text"`
	Bytes            string            `json:"bytes,omitempty"`
	Registers        map[string]string `json:"registers"`
	EffectiveAddress string            `json:"effectiveAddress,omitempty"`
	// MemoryOperand is the operand that addresses memory, e.g. "0x8(%rax)".
	MemoryOperand string `json:"memoryOperand,omitempty"`
	// Access is "read" or "write" for memory operands, when known.
	Access string `json:"access,omitempty"`
}

// Problem is something that could not be read or found, with what to do about it.
type Problem struct {
	Message string `json:"message"`
	Module  string `json:"module,omitempty"`
}
