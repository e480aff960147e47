package native

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/faultline-dev/faultline/analysis/debuginfo/debugfile"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/analysis/model"
)

// maxParallelFetches bounds concurrent debuginfod downloads.
const maxParallelFetches = 8

// debuginfodClient is the client Options ask for: nil when offline or when
// no server is configured.
func (o *Options) debuginfodClient() *debugfile.Debuginfod {
	if o.Offline {
		return nil
	}
	var d *debugfile.Debuginfod
	if len(o.DebuginfodURLs) > 0 {
		d = debugfile.NewDebuginfod(o.DebuginfodURLs) // the environment's limits apply to --debuginfod too
	} else {
		d = debugfile.NewDebuginfodFromEnv()
	}
	if d == nil {
		return nil
	}
	if o.DebuginfodCache != "" {
		d.CacheDir = o.DebuginfodCache
	}
	if o.DebuginfodTimeout > 0 {
		d.Timeout = o.DebuginfodTimeout
	}
	return d
}

// fetchMissing asks debuginfod, for all modules at once, for the
// executables not found on disk (their extents and unwind tables are needed
// before any stack is walked) and for the debug file of the program: one
// goroutine per module (at most maxParallelFetches at a time). The other
// modules' debug files are fetched lazily, when a stack first reaches the
// module (fetchDebugLazily), so a process with hundreds of libraries asks
// only for those that hold a frame. A server that is down costs one
// timeout in all (the client stops asking it).
func (p *Process) fetchMissing() {
	d := p.opt.debuginfodClient()
	if d == nil {
		return
	}
	p.debuginfod = d
	var mu sync.Mutex
	if p.opt.Progress != nil {
		d.Progress = func(msg string) {
			mu.Lock()
			defer mu.Unlock()
			p.opt.Progress(msg, 0, 0)
		}
	}
	type result struct {
		exe, dbg       string
		exeErr, dbgErr error
	}
	var todo []*module
	for _, m := range p.modules {
		if len(m.buildID) == 0 || m.path == "[vdso]" {
			continue
		}
		if m.obj == nil || (m.isExe && m.dbg == nil) {
			todo = append(todo, m)
		} else if m.dbg == nil {
			m.fetchDebug = func(m *module) { p.fetchDebug(d, m) }
		}
	}
	if len(todo) == 0 {
		return
	}
	results := make([]result, len(todo))
	sem := make(chan struct{}, maxParallelFetches)
	var wg sync.WaitGroup
	ctx := context.Background()
	for i, m := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r := &results[i]
			if m.obj == nil {
				r.exe, r.exeErr = d.Fetch(ctx, m.buildID, debugfile.KindExecutable, "")
				if r.exeErr != nil || !m.isExe {
					return
				}
			}
			r.dbg, r.dbgErr = d.Fetch(ctx, m.buildID, debugfile.KindDebuginfo, "")
		}()
	}
	wg.Wait()
	for i, m := range todo {
		r := results[i]
		if r.exe != "" {
			m.notFound = nil
			p.attachBinary(m, r.exe)
			if m.fromLinkMap {
				m.setExtentFromFile(m.ld)
			}
		} else if r.exeErr != nil && !errors.Is(r.exeErr, debugfile.ErrNotFound) {
			m.notFound = append(m.notFound, r.exeErr.Error())
		}
		p.attachFetchedDebug(m, r.dbg, r.dbgErr)
		if m.obj != nil && m.dbg == nil && !m.isExe {
			m.fetchDebug = func(m *module) { p.fetchDebug(d, m) }
		}
	}
	sortModules(p.modules)
	p.reportDownServers(d)
}

// fetchDebug fetches one module's debug file when a stack first reaches
// it (module.init calls it through m.fetchDebug).
func (p *Process) fetchDebug(d *debugfile.Debuginfod, m *module) {
	path, err := d.Fetch(context.Background(), m.buildID, debugfile.KindDebuginfo, "")
	p.attachFetchedDebug(m, path, err)
}

// attachFetchedDebug opens a debug file debuginfod gave, or records why
// there is none.
func (p *Process) attachFetchedDebug(m *module, path string, err error) {
	if path != "" && m.obj != nil && m.dbg == nil {
		if o, oerr := object.OpenObject(path); oerr != nil {
			p.problem(m.path, "cannot read debug file %s from debuginfod: %v", path, oerr)
		} else {
			m.dbg = o
		}
	}
	if err != nil && !errors.Is(err, debugfile.ErrNotFound) {
		m.fetchErr = err
	}
}

// reportDownServers adds one problem per server the client stopped asking,
// once per server however often it is called.
func (p *Process) reportDownServers(d *debugfile.Debuginfod) {
	down := d.Down()
	servers := make([]string, 0, len(down))
	for s := range down {
		servers = append(servers, s)
	}
	sort.Strings(servers)
	p.downMu.Lock()
	defer p.downMu.Unlock()
	for _, s := range servers {
		if p.downReported[s] {
			continue
		}
		if p.downReported == nil {
			p.downReported = map[string]bool{}
		}
		p.downReported[s] = true
		p.problem("", "debuginfod server %s was not asked again after: %v", s, down[s])
	}
}

// reportMissingBinaries turns what locate tried for modules whose file was
// found nowhere into one problem per module.
func (p *Process) reportMissingBinaries() {
	for _, m := range p.modules {
		if m.obj != nil || m.notFound == nil {
			continue
		}
		hint := "copy it from the crashed machine and pass --sysroot or --solib-dir"
		if m.isExe {
			hint = "pass the crashed program with --exe"
		}
		if len(m.buildID) > 0 {
			hint += p.debuginfodHint()
		}
		tried := ""
		if len(m.notFound) > 0 {
			tried = " (" + strings.Join(m.notFound, "; ") + ")"
		}
		p.problem(m.path, "no file matching the core (build-id %s) was found%s: %s", hexOrNone(m.buildID), tried, hint)
	}
}

// reportMissingDebug adds one problem per module that appears in the
// crash's frames without DWARF, saying how to get its debug info.
func (p *Process) reportMissingDebug(c *model.Crash) {
	if d := p.debuginfod; d != nil {
		p.reportDownServers(d)
	}
	used := map[string]bool{}
	for _, th := range c.Threads {
		for _, f := range th.Frames {
			used[f.Module] = true
		}
	}
	for _, m := range p.modules {
		if !used[m.path] || m.obj == nil || m.path == "[vdso]" {
			continue
		}
		s := m.symbols()
		if s == nil || s.HasDWARF() {
			continue
		}
		if err := s.DWARFError(); err != nil {
			// The debug info is there but cannot be read: installing a debug
			// package would not help; say where it is broken.
			p.problem(m.path, "corrupt debug info: %v; frames show symbol-table names only", err)
			continue
		}
		why := ""
		if m.fetchErr != nil {
			why = fmt.Sprintf(" (debuginfod: %v)", m.fetchErr)
		}
		p.problem(m.path, "no debug info (build-id %s): frames show symbol-table names only, without lines or inlined calls%s; %s",
			hexOrNone(m.buildID), why, p.debugHint(m))
	}
}

// debugHint says how to get a module's debug info.
func (p *Process) debugHint(m *module) string {
	var ways []string
	if pkg := debugPackage(m.path); pkg != "" {
		ways = append(ways, "run `apt-get install "+pkg+"` (Debian/Ubuntu; on another machine than the crashed one, pass its /usr/lib/debug with --debug-dir)")
	} else {
		ways = append(ways, "install the distribution's debug package (Debian: its -dbgsym package from the debian-debug archive; Fedora: `dnf debuginfo-install`)")
	}
	ways = append(ways, "pass --debug-dir DIR holding .build-id/"+buildIDPath(m.buildID)+".debug or the file its .gnu_debuglink names")
	return "to get it, " + strings.Join(ways, ", or ") + p.debuginfodHint()
}

// debuginfodHint is what to say about debuginfod in a hint.
func (p *Process) debuginfodHint() string {
	switch {
	case p.opt.Offline:
		return ", or drop --offline to ask debuginfod"
	case p.opt.debuginfodClient() == nil:
		return ", or set DEBUGINFOD_URLS (e.g. https://debuginfod.debian.net, https://debuginfod.fedoraproject.org)"
	}
	return ""
}

func buildIDPath(id []byte) string {
	h := hexOrNone(id)
	if len(h) < 3 {
		return "xx/yyyy"
	}
	return h[:2] + "/" + h[2:]
}

// debugPackage names the Debian package with the detached debug info of
// the glibc objects, which are packaged apart from the -dbgsym archive.
func debugPackage(path string) string {
	base := filepath.Base(path)
	for _, p := range []string{"libc.so", "libm.so", "libpthread.so", "libdl.so", "librt.so", "ld-linux", "libresolv.so", "libutil.so"} {
		if strings.HasPrefix(base, p) {
			return "libc6-dbg"
		}
	}
	return ""
}
