package model

// Crash kinds (Classification.Kind).
const (
	KindNullDeref          = "null-deref"
	KindWildPointer        = "wild-pointer"
	KindUseAfterFree       = "use-after-free"
	KindStackOverflow      = "stack-overflow"
	KindAssertion          = "assertion"
	KindHeapCorruption     = "heap-corruption"
	KindAbort              = "abort"
	KindDivideByZero       = "divide-by-zero"
	KindIllegalInstruction = "illegal-instruction"
	KindBusError           = "bus-error"
	// KindWriteReadonly: a write to memory mapped read-only (a string
	// literal, const data, code, RELRO, a page the program protected).
	KindWriteReadonly = "write-to-readonly"
	// KindMisaligned: an aligned SSE/AVX access (movaps, movdqa) of an
	// address that is not a multiple of its size.
	KindMisaligned = "misaligned-access"
	// KindForbiddenSyscall: SIGSYS from a seccomp filter that refused a
	// system call.
	KindForbiddenSyscall = "forbidden-syscall"
	// KindResourceLimit: SIGXCPU or SIGXFSZ, the CPU-time or file-size
	// limit passed.
	KindResourceLimit = "resource-limit"
	// KindPanic: a language runtime's panic that nothing recovered (Rust
	// built with panic=abort, Go).
	KindPanic = "panic"
	// KindCFIViolation: a control-flow-integrity check (clang
	// -fsanitize=cfi) trapped an indirect call or cast.
	KindCFIViolation = "cfi-violation"

	KindGPUIllegalAddress = "gpu-illegal-address"
	KindGPUMisaligned     = "gpu-misaligned-address"
	KindGPUAssert         = "gpu-assert"
	KindGPUHang           = "gpu-hang"
	KindGPUIllegalInstr   = "gpu-illegal-instruction"
	KindHang              = "hang"
	KindDeadlock          = "deadlock"
	// KindBufferOverflow: an access past the bounds of a heap, stack or
	// global object, as a sanitizer reports it.
	KindBufferOverflow = "buffer-overflow"
	// KindMemoryError: a sanitizer stopped the program on an invalid
	// access whose type its report (not given) would say.
	KindMemoryError = "memory-error"
	// KindUndefinedBehavior: UndefinedBehaviorSanitizer stopped the
	// program on undefined behaviour (overflow, a bad shift, ...).
	KindUndefinedBehavior = "undefined-behavior"
	// KindDataRace: ThreadSanitizer stopped the program on a data race.
	KindDataRace = "data-race"
	// KindUninitialized: MemorySanitizer stopped the program on a use of
	// an uninitialised value.
	KindUninitialized = "uninitialized-value"
	// KindMemoryLeak: LeakSanitizer found leaks at exit.
	KindMemoryLeak = "memory-leak"
	// KindKilled: the fatal signal was sent (kill, tgkill, sigqueue), not
	// raised by a CPU fault: the stacks show where the process was.
	KindKilled  = "killed"
	KindUnknown = "unknown"
)

// Crash contexts (Classification.Context).
const (
	ContextRuntime       = "runtime"
	ContextExitTime      = "exit-time"
	ContextModuleLoad    = "module-load"
	ContextSignalHandler = "signal-handler"
	// ContextGPUKernel: the fault happened on the GPU, in a kernel.
	ContextGPUKernel = "gpu-kernel"
)

// Classification is the model's "crash" section: what went wrong, where in
// the process's life, which frame is the program's own, and the evidence.
type Classification struct {
	Kind    string `json:"kind"`
	Context string `json:"context"`
	// Reraised says a signal handler caught the signal and raised it again;
	// the culprit then lies past the handler frames.
	Reraised bool `json:"reraised"`
	// CulpritFrame indexes the crashing thread's frames: the first frame
	// that is the program's own code (-1 when none is).
	CulpritFrame int `json:"culpritFrame"`
	// Signature is a stable string for grouping crashes: the crash point,
	// the culprit and its caller, runtime frames skipped.
	Signature string `json:"signature"`
	// Summary is one sentence a person can act on.
	Summary string `json:"summary"`
	// Evidence lists the exact values the classification rests on.
	Evidence []string `json:"evidence"`
	// Message is the runtime's own text: glibc's __abort_msg, the failed
	// assertion, malloc's error, the uncaught exception's type and what().
	Message string `json:"message,omitempty"`
	// Locks are the threads blocked on a mutex, with its owner when known.
	Locks []LockWait `json:"locks,omitempty"`
	// Findings are conclusions drawn across threads (a deadlock cycle, a
	// likely race).
	Findings []Finding `json:"findings,omitempty"`
}

// LockWait is one thread blocked acquiring a pthread mutex.
type LockWait struct {
	Thread int    `json:"thread"`
	Mutex  string `json:"mutex"` // address, "0x..."
	// Name is the mutex's symbol, e.g. "journal_lock", when it is a global.
	Name string `json:"name,omitempty"`
	// Owner is the LWP holding the mutex (pthread_mutex_t.__data.__owner), 0 if unknown.
	Owner int `json:"owner,omitempty"`
}

// Finding is a conclusion about several threads.
type Finding struct {
	Kind    string `json:"kind"` // "deadlock", "likely-race"
	Summary string `json:"summary"`
	Threads []int  `json:"threads"`
}
