package classify

import (
	"fmt"
	"path"
	"strings"

	"github.com/faultline-dev/faultline/analysis/classify/runtimemsg"
	"github.com/faultline-dev/faultline/analysis/model"
)

// runtimeModules are the C and C++ runtimes and the dynamic loader: frames
// in them are machinery (raise, abort, malloc's checks, unwinding), never
// the culprit. Matched against the module's file name up to ".so".
var runtimeModules = []string{
	"libc.so", "libc-", "ld-linux", "ld64.so", "ld-musl", "libstdc++.so", "libgcc_s.so", "libpthread.so",
	"libm.so", "libdl.so", "libc++.so", "libc++abi.so", "libunwind.so", "libasan.so", "libtsan.so", "libubsan.so",
	"liblsan.so", "libhwasan.so", "libclang_rt.", "[vdso]",
}

// runtimeFunctions are functions of the C and C++ runtimes that statically
// linked programs (no module to tell them by) carry: the abort and raise
// machinery, assert, malloc's error paths, C++ termination, thread start.
var runtimeFunctions = map[string]bool{
	"raise": true, "__GI_raise": true, "abort": true, "__GI_abort": true, "__pthread_kill_implementation": true,
	"__pthread_kill_internal": true, "__pthread_kill": true, "pthread_kill": true, "__GI___pthread_kill": true,
	"syscall": true, "kill": true, "tgkill": true, "__libc_message": true, "__libc_fatal": true,
	"malloc_printerr": true, "__assert_fail": true, "__assert_fail_base": true, "__GI___assert_fail": true,
	"__assert_perror_fail": true, "__fortify_fail": true, "__stack_chk_fail": true, "__chk_fail": true,
	"std::terminate": true, "__cxa_throw": true, "__cxa_rethrow": true, "__gnu_cxx::__verbose_terminate_handler": true,
	"__cxxabiv1::__terminate": true, "_Unwind_RaiseException": true, "__cxa_call_terminate": true,
	"start_thread": true, "clone": true, "clone3": true, "__clone": true, "__clone3": true,
	"__libc_start_main": true, "__libc_start_main_impl": true, "__libc_start_call_main": true, "_start": true,
	"_int_free": true, "_int_malloc": true, "__libc_free": true, "__GI___libc_free": true, "__libc_malloc": true,
	"free": true, "malloc": true, "realloc": true, "_int_realloc": true, "__libc_realloc": true, "cfree": true,
	"operator new": true, "operator delete": true,
	"__cxa_pure_virtual": true, "__cxa_deleted_virtual": true,
	"__gxx_personality_v0": true, "_Unwind_RaiseException_Phase2": true, "_Unwind_Resume": true,
	"_Unwind_ForcedUnwind": true, "__cxa_begin_catch": true, "__cxa_end_catch": true,
	"execute_native_thread_routine": true, "std::__terminate": true,
	// The C runtime's startup and teardown code linked into every program
	// (crtstuff.c, crti.S).
	"__do_global_dtors_aux": true, "frame_dummy": true, "register_tm_clones": true, "deregister_tm_clones": true,
	"_init": true, "_fini": true,
}

// isRuntimeModule reports whether module is a C/C++ runtime or the loader.
func isRuntimeModule(module string) bool {
	base := path.Base(module)
	for _, m := range runtimeModules {
		if strings.HasPrefix(base, m) {
			return true
		}
	}
	return false
}

// isRuntime reports whether a frame is runtime machinery: in a runtime
// module, or a runtime function linked into the program, or a signal frame.
func isRuntime(f model.Frame) bool {
	if f.Signal || f.Function == model.SignalFrameName {
		return true
	}
	if f.Module != "" && isRuntimeModule(f.Module) {
		return true
	}
	if f.Module == "" && glibcSource(f.File) {
		// A log's frame (gdb names no module for frames with line info):
		// glibc's own source, as libc6-dbg's DWARF names it.
		return true
	}
	fn := baseName(f.Function)
	// "runtime." names only the Go runtime's functions (no C or C++ name
	// has a dot).
	return runtimeFunctions[fn] || runtimemsg.IsSanitizerRuntime(fn) || strings.HasPrefix(fn, "runtime.") || runtimemsg.IsRustRuntime(fn)
}

// glibcDirs are glibc's top-level source directories.
var glibcDirs = map[string]bool{"assert": true, "csu": true, "ctype": true, "debug": true, "dirent": true, "dlfcn": true,
	"elf": true, "iconv": true, "io": true, "libio": true, "locale": true, "malloc": true, "math": true, "misc": true,
	"nptl": true, "nss": true, "posix": true, "resolv": true, "resource": true, "rt": true, "setjmp": true, "signal": true,
	"socket": true, "stdio-common": true, "stdlib": true, "string": true, "sysdeps": true, "time": true, "wcsmbs": true}

// glibcSource reports whether file is a glibc source file as glibc's
// DWARF names it: relative to its build directory ("../sysdeps/x86_64/
// multiarch/strlen-evex.S", "./nptl/pthread_kill.c").
func glibcSource(file string) bool {
	rel := strings.TrimPrefix(strings.TrimPrefix(file, "../"), "./")
	if rel == file {
		return false
	}
	dir, _, ok := strings.Cut(rel, "/")
	return ok && glibcDirs[dir]
}

// isLibraryTemplate reports whether a frame is standard-library code
// compiled into the program from system headers (std::vector::at,
// std::_Hashtable internals) or Rust's standard library monomorphised or
// inlined into it (core::ptr::read_volatile, Result::unwrap): the
// program's own frame is its caller.
func isLibraryTemplate(f model.Frame) bool {
	if strings.HasPrefix(f.File, "/usr/include/") || strings.HasPrefix(f.File, "/usr/lib/gcc/") || runtimemsg.RustLibraryFile.MatchString(f.File) {
		return true
	}
	fn := baseName(f.Function)
	for _, p := range []string{"std::", "__gnu_cxx::", "__cxxabiv1::", "core::", "alloc::", "<core::", "<alloc::", "<std::"} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// reraiseStart returns the index of the first frame past a handler that
// caught the signal and raised it again (0 when none did), and marks the
// classification re-raised. A handler re-raises when the fatal signal was
// sent by the process itself (si_code <= 0: tgkill, raise, kill) while a
// "<signal handler called>" frame is on the crashing stack.
func (a *analyzer) reraiseStart() int {
	sig := a.c.Signal
	if sig == nil || len(a.frames) == 0 {
		return 0
	}
	k := a.signalFrame(0)
	if k <= 0 {
		return 0
	}
	sentBySelf := sig.Code != "" && strings.HasPrefix(sig.Code, "SI_") && sig.Code != "SI_KERNEL" &&
		(sig.Sender == 0 || a.c.Dump.PID == 0 || sig.Sender == a.c.Dump.PID)
	if !sentBySelf {
		return 0
	}
	a.cls.Reraised = true
	return k + 1
}

// signalFrame returns the index of the first signal frame at or after from, or -1.
func (a *analyzer) signalFrame(from int) int {
	for i := from; i < len(a.frames); i++ {
		if a.frames[i].Signal || a.frames[i].Function == model.SignalFrameName {
			return i
		}
	}
	return -1
}

// culprit returns the index of the first frame of the program's own code,
// past the re-raising handler, runtime machinery and library templates;
// failing that, the first frame not in a runtime module; -1 if none.
func (a *analyzer) culprit() int {
	if a.jitCode(a.start) {
		// The code that faulted (or was running) is the program's own,
		// compiled at run time: no caller is more to blame.
		return a.start
	}
	from := a.start
	if a.fetchFault() && from+1 < len(a.frames) {
		// A call to an address with no code: the frame there is no
		// function, and its caller made the bad call.
		from++
	}
	if e := a.runtimes().SanitizerEntry(); e >= 0 {
		// Everything above the sanitizer's entry point is its runtime,
		// whatever its internal functions are called
		// (handleIntegerOverflowImpl<__ubsan::Value>).
		from = e + 1
	}
	if i := a.programFrame(from, true); i >= 0 {
		return i
	}
	if i := a.programFrame(from, false); i >= 0 {
		return i
	}
	for i := from; i < len(a.frames); i++ {
		if !isRuntime(a.frames[i]) {
			return i
		}
	}
	// Only runtime frames, e.g. a -nostdlib program faulting in its own
	// _start: the faulting frame is all there is to blame.
	if a.start < len(a.frames) && a.frames[a.start].Function != "" && !a.frames[a.start].Signal {
		return a.start
	}
	return -1
}

// programFrame returns the first frame from from on that is the program's own
// code: not runtime machinery, not a library template, named, and (when
// skipForeign) not in a library or program the system or a package
// manager installed (foreign). -1 when there is none.
func (a *analyzer) programFrame(from int, skipForeign bool) int {
	unnamed := false
	for i := from; i < len(a.frames); i++ {
		f := a.frames[i]
		if unnamed && f.Trust == model.TrustScan && a.hostCore() {
			// Past code no module names (JIT-compiled code), a frame only
			// stack scanning found is a stale return address as often as a
			// caller: the crash is blamed on the unnamed code, not on it.
			break
		}
		if !isRuntime(f) && !isLibraryTemplate(f) && f.Function != "" && !(skipForeign && foreign(f)) {
			return i
		}
		unnamed = unnamed || (f.Function == "" && !f.Signal)
	}
	return -1
}

// jitCode reports whether frame i runs code that no file maps but the
// core holds: JIT-compiled code in anonymous executable memory (HotSpot,
// V8), not a jump to a wild or NULL address, whose memory is not there.
func (a *analyzer) jitCode(i int) bool {
	if i >= len(a.frames) || a.p == nil || !a.hostCore() {
		return false
	}
	f := a.frames[i]
	if f.Function != "" || f.Module != "" || f.Signal || f.Addr == 0 {
		return false
	}
	var b [1]byte
	n, _ := a.p.ReadMemory(f.Addr, b[:])
	return n == 1
}

// hostCore reports whether the crash is read from a process's core, whose
// frames the unwinder found (a log's frames are as the log printed them).
func (a *analyzer) hostCore() bool {
	return a.c.GPU == nil && a.c.Dump.Format == "elf-core"
}

// crashPoint is the first frame past the runtime machinery, library
// templates included: where the program's code (or a library it compiled
// in) did the fatal thing. -1 if none.
func (a *analyzer) crashPoint() int {
	from := a.start
	if a.fetchFault() {
		from++ // no code at the pc: the caller is where the crash is
	}
	first := -1
	for i := from; i < len(a.frames); i++ {
		if isRuntime(a.frames[i]) {
			continue
		}
		if first < 0 {
			first = i
		}
		// A library's frame that no symbol names ("libhdf5.so@0xb3e0e")
		// gives way to the first named one before the culprit.
		if a.frames[i].Function != "" || i >= a.cls.CulpritFrame {
			if a.frames[i].Function == "" || i > a.cls.CulpritFrame {
				return first
			}
			return i
		}
	}
	return first
}

// exitFunctions run during exit(): atexit handlers, static destructors and
// the loader's finalizers (glibc stdlib/exit.c, elf/dl-fini.c).
var exitFunctions = map[string]bool{
	"__run_exit_handlers": true, "exit": true, "__GI_exit": true, "_dl_fini": true, "__cxa_finalize": true,
	"__libc_csu_fini": true, "__do_global_dtors_aux": true, "_fini": true, "__call_tls_dtors": true,
	"Py_Exit": true, "Py_FinalizeEx": true, "_Py_Finalize": true,
}

// exitTime reports whether the crashing stack runs exit handlers.
func (a *analyzer) exitTime() bool {
	for _, f := range a.frames[a.start:] {
		if exitFunctions[baseName(f.Function)] {
			return true
		}
	}
	return false
}

// loadFunctions run while a shared object is loaded and initialised
// (glibc elf/dl-open.c, elf/dl-init.c).
var loadFunctions = map[string]bool{
	"dlopen": true, "___dlopen": true, "dlopen_doit": true, "_dl_open": true, "dl_open_worker": true,
	"dl_open_worker_begin": true, "_dl_init": true, "call_init": true, "_dl_map_object": true,
	"_dl_map_object_from_fd": true, "_dl_relocate_object": true, "_dl_start_user": true, "__libc_dlopen_mode": true,
}

// context tells where in the process's life the crash happened, from the
// crashing thread's callers past the crash point.
func (a *analyzer) context() string {
	if len(a.frames) == 0 {
		return model.ContextRuntime
	}
	if !a.cls.Reraised && a.signalFrame(0) > 0 {
		return model.ContextSignalHandler
	}
	for i := a.start; i < len(a.frames); i++ {
		fn := baseName(a.frames[i].Function)
		if exitFunctions[fn] {
			return model.ContextExitTime
		}
		if loadFunctions[fn] {
			return model.ContextModuleLoad
		}
	}
	return model.ContextRuntime
}

// signature is the crash point, the culprit and the culprit's caller (as
// Socorro does: runtime frames skipped, template arguments and parameters
// dropped, direct recursion collapsed), joined by " | ".
func (a *analyzer) signature() string {
	var parts []string
	add := func(i int) {
		if i < 0 || i >= len(a.frames) {
			return
		}
		n := a.frameName(a.frames[i])
		if len(parts) > 0 && parts[len(parts)-1] == n {
			return
		}
		parts = append(parts, n)
	}
	cp, cu := a.crashPoint(), a.cls.CulpritFrame
	add(cp)
	add(cu)
	if cu >= 0 {
		callers := 0
		for i := cu + 1; i < len(a.frames) && callers < 1; i++ {
			if isRuntime(a.frames[i]) || a.frameName(a.frames[i]) == a.frameName(a.frames[cu]) {
				continue
			}
			add(i)
			callers++
		}
	}
	if a.cls.Kind == model.KindDeadlock || a.cls.Kind == model.KindHang {
		parts = append([]string{a.cls.Kind}, a.blockedSignature()...)
	}
	if a.cls.Kind == model.KindMemoryLeak {
		// Leaks are found at exit, in no frame of the program's.
		return "LeakSanitizer: memory leaked at exit"
	}
	if a.cls.Kind == model.KindKilled && a.f != nil {
		// Where a killed process was is not a crash site: keep it apart
		// from crashes at the same place.
		parts = append([]string{"killed by " + a.f.name}, parts...)
	}
	if len(parts) == 0 {
		if a.c.Signal != nil {
			return a.c.Signal.Name
		}
		return a.cls.Kind
	}
	return strings.Join(parts, " | ")
}

// frameName is a frame's function for signatures: base name, or the
// module and offset when the function is unknown.
func (a *analyzer) frameName(f model.Frame) string {
	if f.Function != "" {
		return baseName(f.Function)
	}
	for _, m := range a.c.Modules {
		if m.Path == f.Module && f.Addr >= m.Lo && f.Addr < m.Hi {
			return fmt.Sprintf("%s@%#x", path.Base(m.Path), f.Addr-m.Lo)
		}
	}
	return "??"
}
