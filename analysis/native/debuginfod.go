package native

import (
	"context"
	"errors"
	"sort"
	"sync"

	"github.com/faultline-dev/faultline/analysis/debuginfo/debugfile"
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
// module (fetchDebug), so a process with hundreds of libraries asks
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
