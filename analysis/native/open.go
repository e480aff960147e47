package native

import (
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/faultline-dev/faultline/analysis/debuginfo/debugfile"
	"github.com/faultline-dev/faultline/analysis/elfcore"
	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/analysis/python"
	"github.com/faultline-dev/faultline/analysis/unwind"
)

// Options say where to find the files a dump refers to.
type Options struct {
	// Exe is the crashed program's executable, when the path recorded in the
	// core is not it (another machine, a moved build tree).
	Exe string
	// Sysroot is prefixed to every mapped path that does not match on disk.
	Sysroot string
	// DebugDirs hold separate debug files (.build-id/xx/yyyy.debug, debuglink targets).
	DebugDirs []string
	// SearchDirs are searched by file name for mapped objects (like gdb's
	// solib-search-path); the executable's directory is always searched.
	SearchDirs []string
	// Offline turns off every network lookup (debuginfod).
	Offline bool
	// DebuginfodURLs are the debuginfod servers asked for executables and
	// debug files not found on disk; nil means $DEBUGINFOD_URLS.
	DebuginfodURLs []string
	// DebuginfodCache is the download cache; "" means
	// $DEBUGINFOD_CACHE_PATH, else $XDG_CACHE_HOME/debuginfod_client.
	DebuginfodCache string
	// DebuginfodTimeout is the low-speed time of each request: a server under
	// 100 KiB a second for this long is skipped (0: $DEBUGINFOD_TIMEOUT, else 10s).
	DebuginfodTimeout time.Duration
	// MaxFrames bounds each thread's unwind (default unwind.DefaultMaxFrames).
	MaxFrames int
	// Progress, when set, is told how loading goes (done of total threads).
	Progress func(message string, done, total int)
	// OnCrashingThread, when set, receives the model with only the crashing
	// thread unwound, before the other threads are: on cores with hundreds
	// of threads an editor can show the crash at once.
	OnCrashingThread func(partial *model.Crash)
	// SanitizerLog is the log of a sanitizer's report of the same crash
	// (AddressSanitizer's stderr); its bug type and stacks classify the core.
	SanitizerLog string
	// Warn, when set, is told what the user asked for that was not done
	// (an --exe of another build); the command line prints it on stderr.
	// It is a problem in the report as well.
	Warn func(message string)
	// Pool, when set, lends the modules of earlier cores of the same
	// program to this one and keeps this core's for the next (see Pool).
	Pool *Pool
}

// Process is an opened core with its modules located: the state one analysis
// works from.
type Process struct {
	core     *elfcore.Core
	opt      Options
	locator  *debugfile.Locator
	modules  []*module // sorted by lo
	exe      *module
	problems []model.Problem

	problemsMu sync.Mutex // problem may be called while stacks are walked in parallel

	debuginfod   *debugfile.Debuginfod // nil when not asking debuginfod
	downMu       sync.Mutex
	downReported map[string]bool // servers already named in a problem
}

// Open locates the modules of an opened core (executable, shared
// libraries, vdso, their debug files) and returns the process to read the
// crash from. It fails only for machines faultline cannot unwind; what is
// missing becomes a Problem. Close releases the core and the modules.
func Open(core *elfcore.Core, opt Options) (*Process, error) {
	if !supportedMachine(core.Machine) {
		return nil, fmt.Errorf("%s: %v cores are not supported (x86-64 and aarch64 are)", core.Path, core.Machine)
	}
	p := &Process{core: core, opt: opt}
	search := append([]string(nil), opt.SearchDirs...)
	if opt.Exe != "" {
		search = append(search, filepath.Dir(opt.Exe))
	}
	p.locator = &debugfile.Locator{Sysroot: opt.Sysroot, DebugDirs: opt.DebugDirs, SearchDirs: search}
	for _, pr := range core.Problems {
		p.problems = append(p.problems, model.Problem{Message: "core: " + pr.String()})
	}
	p.loadModules()
	return p, nil
}

// Close releases the modules' files and the core.
func (p *Process) Close() error {
	for _, m := range p.modules {
		m.close()
	}
	return p.core.Close()
}

// Crash reads the crash model: every thread unwound and symbolized, with
// the Python frames of CPython threads interleaved. path names the dump.
func (p *Process) Crash(path string) *model.Crash {
	c := p.crash(path)
	python.Interleave(c, p)
	return c
}

func (p *Process) problem(module, format string, args ...any) {
	p.problemsMu.Lock()
	defer p.problemsMu.Unlock()
	p.problems = append(p.problems, model.Problem{Module: module, Message: fmt.Sprintf(format, args...)})
}

// moduleAt returns the module whose mappings contain addr.
func (p *Process) moduleAt(addr uint64) *module {
	i := sort.Search(len(p.modules), func(i int) bool { return p.modules[i].hi > addr })
	if i < len(p.modules) && p.modules[i].lo <= addr {
		return p.modules[i]
	}
	return nil
}

// ReadMemory reads process memory: the core's dumped segments first, then
// the file-backed mappings of modules (code and read-only data are usually
// not dumped).
func (p *Process) ReadMemory(addr uint64, b []byte) (int, error) {
	n, err := p.core.ReadMemory(addr, b)
	for n < len(b) {
		a := addr + uint64(n)
		m := p.moduleAt(a)
		if m == nil || m.obj == nil {
			break
		}
		k, _ := m.obj.ReadAt(b[n:], a-m.bias)
		if k == 0 {
			break
		}
		n += k
		if n < len(b) {
			// The file ran out (bss); the core may hold the rest.
			k, _ = p.core.ReadMemory(addr+uint64(n), b[n:])
			if k == 0 {
				break
			}
			n += k
		}
	}
	if n == len(b) {
		return n, nil
	}
	if err == nil {
		err = &unwind.MemoryError{Addr: addr + uint64(n)}
	}
	return n, err
}

// ModuleAt implements unwind.Finder.
func (p *Process) ModuleAt(pc uint64) *unwind.Module {
	m := p.moduleAt(pc)
	if m == nil {
		return nil
	}
	return m.unwindInfo()
}
