package modulepool

import (
	"fmt"
	"os"
	"sync"

	"go.uber.org/zap"

	"github.com/faultline-dev/faultline/analysis"
)

// The module pool. A server opens dump after dump of the same programs
// (the same core again after a settings change, the next core of a job,
// the torch program's 316 libraries each time): the pool keeps the
// binaries and debug files the shown dump uses open, with their symbol
// tables, decoded DWARF units and unwind tables, for the next open, as
// `analyze DIR` keeps them from one core to the next. One open at a time
// uses it: an open that finds it busy (a cancelled open still running,
// which analysis cannot interrupt) goes without. After an open that used
// it is shown, the files that open did not use are closed (the dump shown
// before is closed by then), and what the pooled files decompressed is
// written to the index cache for the next process. An open whose options
// would locate other files (offline turned off, another debuginfod server,
// debug directory or sysroot) retires the pool and starts a new one; the
// retired pool's files are closed once a dump opened after it is shown.

// A Pool is the server's module pool: it keeps the shown dump's modules
// open for the next open. poolMu is held by the open using it and guards
// pool, poolKey (the options it serves) and retired (pools of earlier
// options).
type Pool struct {
	pool    *analysis.ModulePool
	poolKey string
	retired []*analysis.ModulePool
	poolMu  sync.Mutex
}

// takePool returns the pool for one open with options opts, or nil when
// another open holds it; the caller gives it back with givePool.
func (s *Pool) takePool(opts analysis.Options) *analysis.ModulePool {
	if !s.poolMu.TryLock() {
		return nil
	}
	if key := poolOptions(opts); s.pool == nil || key != s.poolKey {
		if s.pool != nil {
			s.retired = append(s.retired, s.pool)
		}
		s.pool, s.poolKey = analysis.NewModulePool(), key
	}
	s.pool.Mark()
	return s.pool
}

// poolOptions is what of an open's options decides which files its
// modules load and what is asked for them: a pool serves only opens that
// agree on it.
func poolOptions(o analysis.Options) string {
	urls := o.DebuginfodURLs
	if urls == nil {
		urls = []string{os.Getenv("DEBUGINFOD_URLS")}
	}
	return fmt.Sprintf("%q %q %q %t %q %q %v", o.Sysroot, o.DebugDirs, o.SearchDirs, o.Offline, urls, o.DebuginfodCache, o.DebuginfodTimeout)
}

// Open opens dump with the pool when it is free.
func (s *Pool) Open(dump string, opts analysis.Options) (*analysis.Session, error) {
	opts.Pool = s.takePool(opts)
	defer s.givePool(opts.Pool)
	return analysis.OpenSession(dump, opts)
}

// givePool ends an open's use of the pool.
func (s *Pool) givePool(pool *analysis.ModulePool) {
	if pool != nil {
		s.poolMu.Unlock()
	}
}

// Trim closes what the shown dump, opened with the pool, does not
// use, and stores what the pool decompressed, after the dump is shown
// (unless a cancelled open still holds the pool).
func (s *Pool) Trim(log *zap.Logger) {
	if !s.poolMu.TryLock() {
		return
	}
	defer s.poolMu.Unlock()
	s.closeRetired()
	reused, dropped := s.pool.Reused(), s.pool.DropUnused()
	log.Debug("module pool", zap.Int("reused", reused), zap.Int("dropped", dropped), zap.Int("files", s.pool.Len()))
	s.pool.StoreCache()
}

// Close closes every pooled file, once no open holds the pool.
func (s *Pool) Close() {
	s.poolMu.Lock()
	defer s.poolMu.Unlock()
	s.closeRetired()
	s.pool.Close()
	s.pool = nil
}

// closeRetired closes the pools of earlier options (takePool), with
// poolMu held, once the dump shown no longer uses them.
func (s *Pool) closeRetired() {
	for _, p := range s.retired {
		p.Close()
	}
	s.retired = nil
}
