package server

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
	"go.uber.org/zap"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/gitsrc"
)

// faultline.fetchSources checks out the exact source revision of each
// component of the shown crash (gitsrc.Resolve: faultline.json at a
// workspace root, .note.package, Python metadata, dpkg, .git near the build
// paths, the built-in registry), maps the frames' build paths onto the
// checkouts (Frame.Source, so diagnostics, lenses and hovers move there)
// and reviews the upstream branch for commits that changed the crashing
// functions since. faultline.showCommit writes one such commit's patch and
// opens it.

// fetchedSources is a gitsrc result applied to a loaded dump.
type fetchedSources struct {
	result   *gitsrc.Result
	cacheDir string
}

// FetchSourcesArgs is faultline.fetchSources' optional argument.
type FetchSourcesArgs struct {
	// Fix is a commit to look for in the crashing revision
	// (FetchSourcesResult.Fix says whether it is included).
	Fix string `json:"fix,omitempty"`
}

// FetchSourcesResult is faultline.fetchSources' result.
type FetchSourcesResult struct {
	Components []gitsrc.Component `json:"components"`
	// Mapped counts the frames whose file now resolves into a checkout.
	Mapped   int               `json:"mapped"`
	Upstream []UpstreamSummary `json:"upstream"`
	Fix      *gitsrc.FixCheck  `json:"fix,omitempty"`
	Problems []string          `json:"problems"`
}

// UpstreamSummary is one reviewed function of FetchSourcesResult.
type UpstreamSummary struct {
	URI      string `json:"uri"`
	Function string `json:"function,omitempty"`
	// Line is the function's first line (1-based), where its lens is.
	Line     int    `json:"line"`
	Revision string `json:"revision"`
	// Commits changed the file since Revision; Touching changed the function.
	Commits  int `json:"commits"`
	Touching int `json:"touching"`
	// Top is the highest-ranked commit (faultline.showCommit's argument).
	Top *ShowCommitArgs `json:"top,omitempty"`
}

// ShowCommitArgs is faultline.showCommit's argument.
type ShowCommitArgs struct {
	Repo   string `json:"repo"`
	Commit string `json:"commit"`
}

// gitsrcOptions builds gitsrc's options from the settings and the first
// workspace folder holding a faultline.json; the settings' sourceMap rules
// win over the file's.
func gitsrcOptions(st Settings, folders []string) (gitsrc.Options, error) {
	var cfg *gitsrc.Config
	for _, dir := range folders {
		c, err := gitsrc.FindConfig(dir)
		if err != nil {
			return gitsrc.Options{}, err
		}
		if c != nil {
			cfg = c
			break
		}
	}
	if len(st.SourceMap) > 0 {
		if cfg == nil {
			cfg = &gitsrc.Config{}
		}
		merged := map[string]string{}
		for from, to := range cfg.SourceMap {
			merged[from] = to
		}
		for from, to := range st.SourceMap {
			if from != "" && to != "" {
				merged[from] = expandHome(to)
			}
		}
		cfg.SourceMap = merged
	}
	opt := gitsrc.Options{Config: cfg, Offline: st.Offline, CacheDir: expandHome(st.CacheDir)}
	if opt.CacheDir == "" && cfg != nil {
		opt.CacheDir = expandHome(cfg.CacheDir)
	}
	if opt.CacheDir == "" {
		opt.CacheDir = gitsrc.DefaultCacheDir()
	}
	return opt, nil
}

// fetchSources resolves the shown crash's sources with $/progress and
// shows the crash in the checkouts.
func (s *Server) fetchSources(ctx context.Context, args FetchSourcesArgs, token protocol.ProgressToken) (*FetchSourcesResult, error) {
	s.mu.Lock()
	l := s.cur
	st, folders := s.settings, append([]string(nil), s.folders...)
	s.mu.Unlock()
	if l == nil {
		return nil, errors.New("no dump is open (run faultline.open first)")
	}
	opt, err := gitsrcOptions(st, folders)
	if err != nil {
		return nil, err
	}
	opt.Fix = args.Fix

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	prog := s.beginProgress(ctx, token, "faultline: fetching sources", cancel)
	prog.messages = true
	defer prog.end("")
	opt.Progress = func(p gitsrc.Progress) { prog.report(p.Message, p.Done, p.Total) }

	s.fetchMu.Lock()
	defer s.fetchMu.Unlock()
	s.mu.Lock()
	crash := l.view.crash
	s.mu.Unlock()
	// The crash moves into the checkouts as soon as they are written; the
	// upstream review's lenses and hovers follow when it is done.
	opt.CheckedOut = func(early *gitsrc.Result) {
		if v := s.showSources(l, crash, early, opt.CacheDir); v != nil {
			s.publish(v)
			s.refresh()
			prog.report("reviewing upstream history", 0, 0)
		}
	}
	res, err := gitsrc.Resolve(ctx, crash, opt)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	v := s.showSources(l, crash, res, opt.CacheDir)
	if v == nil {
		return nil, errors.New("the dump was closed or replaced while its sources were fetched")
	}
	s.publish(v)
	s.refresh()

	out := summarizeSources(v, res)
	if len(out.Problems) > 0 {
		s.showMessage(protocol.MessageTypeWarning, "faultline: fetching sources: "+strings.Join(out.Problems, "; "))
	}
	msg := fmt.Sprintf("%d component(s), %d frame(s) mapped", len(out.Components), out.Mapped)
	prog.end(msg)
	s.log.Info("fetched sources", zap.String("summary", msg), zap.Int("problems", len(out.Problems)))
	return out, nil
}

// showSources applies a gitsrc result to the loaded dump l (a copy of its
// crash, then a new view: views are read without locks) and returns the
// view, or nil when l is no longer the dump shown.
func (s *Server) showSources(l *loaded, crash *analysis.Crash, res *gitsrc.Result, cacheDir string) *view {
	applied := copyFrames(crash)
	gitsrc.Apply(applied, res)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != l {
		return nil
	}
	l.sources = &fetchedSources{result: res, cacheDir: cacheDir}
	thread := 0
	if l.view.thread != nil {
		thread = l.view.thread.ID
	}
	l.view = newView(applied, l, thread, s.res, l.view.values)
	return l.view
}

// copyFrames copies the parts of c that gitsrc.Apply writes (frames'
// Source, modules' Component).
func copyFrames(c *analysis.Crash) *analysis.Crash {
	cp := *c
	cp.Threads = make([]analysis.Thread, len(c.Threads))
	for i, t := range c.Threads {
		t.Frames = append([]analysis.Frame(nil), t.Frames...)
		cp.Threads[i] = t
	}
	cp.Modules = append([]analysis.Module(nil), c.Modules...)
	return &cp
}

func summarizeSources(v *view, res *gitsrc.Result) *FetchSourcesResult {
	out := &FetchSourcesResult{Components: res.Components, Upstream: []UpstreamSummary{}, Fix: res.Fix,
		Problems: []string{}}
	if out.Components == nil {
		out.Components = []gitsrc.Component{}
	}
	for _, f := range res.Frames {
		if f.Source != "" && isFile(f.Source) {
			out.Mapped++
		}
	}
	for _, fs := range v.upstream {
		for _, f := range fs {
			u := UpstreamSummary{URI: string(uri.File(f.path)), Function: f.review.Function, Line: f.start,
				Revision: f.review.Revision, Commits: len(f.review.Commits), Touching: f.touching()}
			if len(f.review.Commits) > 0 {
				u.Top = &ShowCommitArgs{Repo: f.repo, Commit: f.review.Commits[0].Commit}
			}
			out.Upstream = append(out.Upstream, u)
		}
	}
	sortUpstream(out.Upstream)
	for _, p := range res.Problems {
		msg := p.Message
		if p.Module != "" {
			msg = filepath.Base(p.Module) + ": " + msg
		}
		out.Problems = append(out.Problems, msg)
	}
	return out
}

func sortUpstream(u []UpstreamSummary) {
	sort.Slice(u, func(i, j int) bool {
		if u[i].URI != u[j].URI {
			return u[i].URI < u[j].URI
		}
		return u[i].Line < u[j].Line
	})
}

// showCommit writes the patch of a commit fetched by faultline.fetchSources
// (gitsrc.CommitPatch, from the cache only) and opens it with
// window/showDocument.
func (s *Server) showCommit(ctx context.Context, a ShowCommitArgs) (map[string]any, error) {
	if a.Repo == "" || a.Commit == "" {
		return nil, errors.New(`faultline.showCommit wants {"repo": url, "commit": hash}`)
	}
	s.mu.Lock()
	cacheDir := ""
	if s.cur != nil && s.cur.sources != nil {
		cacheDir = s.cur.sources.cacheDir
	}
	st, folders := s.settings, append([]string(nil), s.folders...)
	canShow := s.caps.showDocument
	s.mu.Unlock()
	if cacheDir == "" {
		opt, err := gitsrcOptions(st, folders)
		if err != nil {
			return nil, err
		}
		cacheDir = opt.CacheDir
	}
	path, err := gitsrc.CommitPatch(cacheDir, a.Repo, a.Commit)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"path": path, "shown": false}
	if canShow {
		yes := true
		res, err := s.client.ShowDocument(ctx, &protocol.ShowDocumentParams{URI: uri.File(path), TakeFocus: &yes})
		if err != nil {
			return nil, fmt.Errorf("patch written to %s, but window/showDocument failed: %w", path, err)
		}
		out["shown"] = res != nil && res.Success
	}
	return out, nil
}
