package classify

import (
	"fmt"

	"github.com/faultline-dev/faultline/analysis/model"
)

// A Kind is one row of the crash-kind table: the name the model carries
// (model.Classification.Kind), what a crash of that kind is, and the next
// steps a report recommends first for it. The rules that recognise a kind
// live in this package's other files; a new kind is a model constant, a row
// here (and in the README's table) and the rule that gives it.
type Kind struct {
	Name string
	// Meaning says in one line what a crash of this kind is; the README's
	// table of kinds lists the same lines.
	Meaning string
	// Steps are the kind's own next steps. where names the culprit as the
	// report shows it: "`f` at file.c:12" (or "the culprit frame") for a
	// CPU crash, "file.cu:40" (or "the faulting line") for a GPU fault.
	Steps func(c *model.Crash, where string) []string
}

// Kinds is the table of crash kinds, in the model's order.
var Kinds = []Kind{
	{model.KindNullDeref, "a load, store or call through a NULL pointer (plus a field offset)",
		at("Read %s and find where the NULL pointer comes from; add a check or fix the initialisation.")},
	{model.KindWildPointer, "an access through a corrupted, dangling, poisoned or out-of-bounds pointer", badPointerSteps},
	{model.KindUseAfterFree, "an access to memory that was already freed", badPointerSteps},
	{model.KindStackOverflow, "the thread ran out of stack: unbounded recursion or large locals",
		at("Bound the recursion through %s or make it iterative; `ulimit -s` only hides it.")},
	{model.KindAssertion, "a failed assert(), or a failed check of the language runtime",
		at("Read the assertion at %s and find which caller broke its condition.")},
	{model.KindHeapCorruption, "the allocator found its own data damaged (a double free, an overflowing write)",
		fixed("Run the program under AddressSanitizer (-fsanitize=address) or valgrind: the corrupting write or double free happened before this point.")},
	{model.KindAbort, "the program called abort(): an uncaught exception, std::terminate or its own error path",
		at("Handle the error at %s (catch the exception or avoid the failing call).")},
	{model.KindDivideByZero, "SIGFPE: a division by zero, or an integer division that overflows (INT_MIN / -1)",
		at("Guard the division at %s against a zero divisor.")},
	{model.KindIllegalInstruction, "an instruction the CPU refused: a deliberate trap, or a CPU feature the machine lacks",
		fixed("Compare the binary's -march with the machine's CPU flags (grep flags /proc/cpuinfo), or find why the code reached a trap.")},
	{model.KindBusError, "SIGBUS: a misaligned access, a page past the end of a mapped file, a hardware memory error",
		at("Check the memory %s accesses: a stack buffer overflow, a truncated mmap'd file, or a misaligned access.")},
	{model.KindWriteReadonly, "a write to memory mapped read-only: a string literal, const data, code, or a page the program protected",
		at("Find what %s writes: a string literal or const object must be copied into writable memory first (char buf[] = \"...\", strdup); a page the program protected (mprotect) must be made writable first.")},
	{model.KindMisaligned, "an aligned SSE/AVX access (movaps, movdqa) of an address that is not a multiple of its width",
		at("Align the data %s accesses to the vector's width (alignas, aligned_alloc, posix_memalign), or load it with an unaligned instruction (movups, _mm_loadu_*).")},
	{model.KindForbiddenSyscall, "SIGSYS: the process's seccomp filter refused a system call (named in the evidence)",
		fixed("Allow the system call in the seccomp filter (the container's or sandbox's profile, or the program's own filter), or avoid making it; `strace -f` lists the calls the program makes.")},
	{model.KindResourceLimit, "SIGXCPU or SIGXFSZ: the process passed its CPU-time (ulimit -t) or file-size (ulimit -f) limit", resourceLimitSteps},
	{model.KindPanic, "a language runtime's panic that nothing caught: Rust built with panic=abort (unwrap, an index out of bounds, panic!), an unrecovered Go panic",
		at("Read the panic's message and fix the failing operation at %s: handle the error or the missing value instead of unwrapping it, check the index, or recover where the error can be handled.")},
	{model.KindCFIViolation, "a control-flow-integrity check (clang -fsanitize=cfi) stopped an indirect call or cast to a function or object of the wrong type",
		at("Check the pointer %s calls through or casts: its target's type does not match the call's (a cast between unrelated types, a stale or corrupted pointer); rebuild with -fno-sanitize-trap=cfi for the runtime's report.")},
	{model.KindGPUIllegalAddress, "a GPU kernel accessed an address outside every allocation", gpuAddressSteps},
	{model.KindGPUMisaligned, "a GPU kernel accessed memory with the wrong alignment",
		at("Check the alignment of the pointer used at %s (a vector load/store of a pointer cast from a smaller type).")},
	{model.KindGPUAssert, "a device-side assert() failed in a GPU kernel",
		at("Read the device assertion at %s and find which launch input broke it.")},
	{model.KindGPUHang, "a GPU kernel stopped making progress (a watchdog or timeout ended it)",
		fixed("Look for a loop or barrier the waiting threads cannot leave (a __syncthreads() in divergent code, a spin on a flag no one sets).")},
	{model.KindGPUIllegalInstr, "a GPU kernel reached an instruction or pc the SM refused: a __trap(), a bad jump target, code for another architecture",
		at("Find how the warp reached %s: a __trap() or asm(\"trap;\") on the path, a call through a corrupted function pointer, or a cubin built for another sm_XX than the device.")},
	{model.KindHang, "no fatal signal: a live process dumped (gcore, a watchdog), not in a lock cycle",
		fixed("Look at the running threads' stacks for a busy loop and at the waiting ones for a lost wake-up.")},
	{model.KindDeadlock, "threads wait on each other's mutexes in a cycle",
		fixed("Take the mutexes in one global order in every thread (or lock them together with std::scoped_lock / std::lock).",
			"Run the program under ThreadSanitizer (-fsanitize=thread), which reports lock-order inversions even when they do not deadlock.")},
	{model.KindBufferOverflow, "an access past the bounds of a heap, stack or global object, as a sanitizer reports it",
		at("Check the index or length used at %s against the size of the object it accesses (the allocation site is in the evidence).")},
	{model.KindMemoryError, "a sanitizer stopped the program on an invalid access whose report was not given",
		fixed("Give AddressSanitizer's report (the program's stderr) with the core: `faultline analyze CORE asan.log` names the bug type and the allocation and free stacks.")},
	{model.KindUndefinedBehavior, "UndefinedBehaviorSanitizer stopped the program on undefined behaviour (an overflow, a bad shift, a misaligned or NULL access)",
		at("Fix the operation at %s that UndefinedBehaviorSanitizer names (the check is in the evidence); its report on stderr gives the operands.")},
	{model.KindDataRace, "ThreadSanitizer stopped the program on a data race between two threads",
		at("Protect the shared data %s accesses with a mutex, or make it atomic; ThreadSanitizer's report (stderr) gives the other thread's access and where the memory was allocated.")},
	{model.KindUninitialized, "MemorySanitizer stopped the program on a use of an uninitialised value",
		at("Initialise the value %s uses on every path; rebuild with -fsanitize-memory-track-origins=2 for where it was allocated.")},
	{model.KindMemoryLeak, "LeakSanitizer found memory still allocated and unreachable when the program exited",
		fixed("Read LeakSanitizer's report (the program's stderr): each leak's allocation stack names the allocation nobody frees.")},
	{model.KindKilled, "the fatal signal was sent (kill, tgkill, sigqueue), not raised by a fault: the stacks are a snapshot",
		fixed("Find what sent the signal (the sender's pid and uid are in the signal line: a timeout, watchdog, job scheduler or a user's kill), and read the stacks as a snapshot of where the process was, not as a crash site.")},
	{model.KindUnknown, "none of the above: the signal and the stacks are given as they are", unknownSteps},
}

// KindOf returns the table's row for a kind name, and the row of
// model.KindUnknown for a name the table does not have.
func KindOf(name string) Kind {
	for _, k := range Kinds {
		if k.Name == name {
			return k
		}
	}
	return KindOf(model.KindUnknown)
}

// KindSteps returns the next steps for the crash's kind (c.Classification
// must be set); where names its culprit as Kind.Steps describes.
func KindSteps(c *model.Crash, where string) []string {
	return KindOf(c.Classification.Kind).Steps(c, where)
}

// at is a kind's single next step, naming the culprit at its %s.
func at(format string) func(*model.Crash, string) []string {
	return func(_ *model.Crash, where string) []string { return []string{fmt.Sprintf(format, where)} }
}

// fixed is a kind's next steps when they name no culprit.
func fixed(steps ...string) func(*model.Crash, string) []string {
	return func(*model.Crash, string) []string { return append([]string(nil), steps...) }
}

func badPointerSteps(_ *model.Crash, where string) []string {
	return []string{fmt.Sprintf("Trace the bad pointer used at %s back to where it was stored; rebuild with -fsanitize=address to catch the first invalid write or the use after free.", where)}
}

// gpuAddressSteps compares the access with the nearest allocation when the
// input names one (compute-sanitizer does).
func gpuAddressSteps(c *model.Crash, where string) []string {
	s := fmt.Sprintf("Check the index or pointer used at %s against the buffer it addresses", where)
	if c.GPU != nil && c.GPU.Allocation != nil {
		al := c.GPU.Allocation
		s += fmt.Sprintf(": the access lands %d bytes %s an allocation of %d bytes", al.Distance, al.Relation, al.Size)
		if al.Size == 0 {
			s += " (an empty buffer: a zero-size launch input)"
		}
	}
	if c.GPU != nil && c.GPU.StandIn {
		// An SM-level exception whose warps had exited: no indices left.
		return []string{s + "; the dump keeps no block or thread of this fault (its warps had exited), so rerun under compute-sanitizer to catch the access with its thread."}
	}
	return []string{s + "; the block/thread indices above give the index's inputs."}
}

// resourceLimitSteps name the limit the signal says was passed.
func resourceLimitSteps(c *model.Crash, where string) []string {
	if c.Signal != nil && c.Signal.Number == sigXFSZ {
		return []string{fmt.Sprintf("Check what %s writes: a file grew past the file-size limit (`ulimit -f`, RLIMIT_FSIZE); raise the limit or bound the output. The core itself is cut at the same limit.", where)}
	}
	return []string{fmt.Sprintf("Check the work %s was doing: the process used up its CPU-time limit (`ulimit -t`, RLIMIT_CPU, a batch system's time limit); raise the limit or find the loop that does not end.", where)}
}

// unknownSteps: a core cut short is the first thing to fix; otherwise
// start from the culprit.
func unknownSteps(c *model.Crash, where string) []string {
	if c.Dump.Incomplete != nil {
		return []string{"Get a whole core: this one is cut short (the problem \"the core is truncated\" below says where); raise `ulimit -c` " +
			"(or systemd-coredump's ProcessSizeMax), check the disk the core is written to, and crash the program again."}
	}
	return []string{fmt.Sprintf("Start from %s.", where)}
}
