package sourcelookup

import (
	"context"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/faultline-dev/faultline/analysis/debuginfo/debugfile"
	"github.com/faultline-dev/faultline/analysis/model"
)

// Bounds on what one crash fetches from debuginfod.
const (
	// maxFetches caps the distinct files asked for.
	maxFetches = 64
	// fetchParallel is how many requests run at once.
	fetchParallel = 4
	// fetchBudget bounds the whole Fetch; each request is bounded by the
	// client's own DEBUGINFOD_TIMEOUT as well.
	fetchBudget = 60 * time.Second
	// maxSourceSize caps one source file (DEBUGINFOD_MAXSIZE when smaller).
	maxSourceSize = 16 << 20
)

// maxFetchBytes stops a Fetch from starting more downloads once its files
// add up to this much: with maxFetches and maxSourceSize it bounds what one
// crash adds to the cache (a variable so that a test can lower it).
var maxFetchBytes int64 = 128 << 20

// fetchKey names a fetched file: the frame's module and the path its DWARF
// names (comp_dir/name).
type fetchKey struct{ module, path string }

func fetchKeyOf(fr *model.Frame) fetchKey {
	_, full := names(fr)
	return fetchKey{fr.Module, full}
}

// DebuginfodFromEnv is the debuginfod client of the environment
// (DEBUGINFOD_URLS and elfutils' other variables; nil when none is set)
// with one download capped at maxSourceSize, for Config.Remote.
func DebuginfodFromEnv() *debugfile.Debuginfod {
	d := debugfile.NewDebuginfodFromEnv()
	if d != nil && (d.MaxSize <= 0 || d.MaxSize > maxSourceSize) {
		d.MaxSize = maxSourceSize
	}
	return d
}

// Fetch is gdb's last step for the frames of crash whose file resolves
// nowhere on this machine: debuginfod's /buildid/BUILDID/source/PATH, with
// the build-id of the frame's module and the path the compiler saw
// (comp_dir/name), downloaded into the debuginfod cache (its size cap,
// timeouts and remembered misses apply). The crashing thread's frames are
// asked for first, at most maxFetches files, no more once maxFetchBytes
// have come (each file at most maxSourceSize). Fetched files are made
// read-only: they are a copy of the build's, not the user's to edit.
// Resolve then returns them (until the next Fetch) and FetchedFrom says
// where they came from. Fetch returns how many files it fetched and the
// errors other than "not found".
func (r *Resolver) Fetch(ctx context.Context, crash *model.Crash, exe string) (int, error) {
	if r.remote == nil || crash == nil {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(ctx, fetchBudget)
	defer cancel()
	want := r.missing(crash, exe)
	got := map[fetchKey]string{}
	var (
		mu    sync.Mutex
		errs  []error
		total int64
		wg    sync.WaitGroup
		sem   = make(chan struct{}, fetchParallel)
	)
	for key, id := range want {
		sem <- struct{}{}
		mu.Lock()
		full := total >= maxFetchBytes
		mu.Unlock()
		if full {
			<-sem
			break
		}
		wg.Add(1)
		go func(key fetchKey, id []byte) {
			defer func() { <-sem; wg.Done() }()
			p, err := r.remote.Fetch(ctx, id, debugfile.KindSource, key.path)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				_ = os.Chmod(p, 0o444)
				got[key] = p
				if fi, err := os.Stat(p); err == nil {
					total += fi.Size()
				}
			case !errors.Is(err, debugfile.ErrNotFound) && len(errs) < 4:
				errs = append(errs, err)
			}
		}(key, id)
	}
	wg.Wait()
	from := "debuginfod " + strings.Join(r.remote.URLs, " ")
	r.mu.Lock()
	r.fetched, r.origin = got, map[string]string{}
	for _, p := range got {
		r.origin[p] = from
	}
	r.mu.Unlock()
	return len(got), errors.Join(errs...)
}

// missing lists the files of crash's native frames that resolve nowhere
// locally, with their module's build-id: the crashing thread first, at
// most maxFetches.
func (r *Resolver) missing(crash *model.Crash, exe string) map[fetchKey][]byte {
	ids := map[string][]byte{}
	for _, m := range crash.Modules {
		if id, err := hex.DecodeString(m.BuildID); err == nil && len(id) > 0 {
			ids[m.Path] = id
		}
	}
	threads := make([]*model.Thread, 0, len(crash.Threads))
	for i := range crash.Threads {
		if t := &crash.Threads[i]; t.ID == crash.CrashingThreadID {
			threads = append([]*model.Thread{t}, threads...)
		} else {
			threads = append(threads, t)
		}
	}
	want := map[fetchKey][]byte{}
	for _, t := range threads {
		for i := range t.Frames {
			fr := &t.Frames[i]
			key := fetchKeyOf(fr)
			id := ids[fr.Module]
			if fr.File == "" || fr.Language != "" || id == nil || !filepath.IsAbs(key.path) || want[key] != nil {
				continue
			}
			if r.resolveLocal(fr, exe) != "" {
				continue
			}
			if len(want) == maxFetches {
				return want
			}
			want[key] = id
		}
	}
	return want
}

// FetchedFrom says where a file Resolve returned came from when Fetch
// brought it ("debuginfod URL..."), or "" for a file of this machine.
func (r *Resolver) FetchedFrom(path string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.origin[path]
}

// KeepFetched carries the files prev's last Fetch brought over to r (a
// resolver made for new settings while the same crash stays open), when
// r may fetch too.
func (r *Resolver) KeepFetched(prev *Resolver) {
	if prev == nil || r.remote == nil {
		return
	}
	prev.mu.Lock()
	fetched, origin := prev.fetched, prev.origin
	prev.mu.Unlock()
	r.mu.Lock()
	r.fetched, r.origin = fetched, origin
	r.mu.Unlock()
}
