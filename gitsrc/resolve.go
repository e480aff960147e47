package gitsrc

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/gitsrc/moduleorigin"
)

// Resolve inventories the components of a crash, fetches and checks out
// their exact revisions into the cache, maps every frame's file onto a
// checkout, reviews upstream history for the culprit frame and its nearest
// callers, and answers Options.Fix. Like analysis.Open it does not fail
// all or nothing: what cannot be done becomes a Problem next to the rest.
// It returns an error only when the cache cannot be used or ctx ends.
//
// Resolve does not modify c; Apply writes the result into it.
func Resolve(ctx context.Context, c *analysis.Crash, opt Options) (*Result, error) {
	cacheDir := opt.CacheDir
	if cacheDir == "" && opt.Config != nil {
		cacheDir = opt.Config.CacheDir
	}
	ca, err := openCache(cacheDir)
	if err != nil {
		return nil, err
	}
	res := &Result{Components: []Component{}, Frames: []FrameSource{}, Upstream: []FileReview{}, Problems: []Problem{}}
	for _, n := range opt.Config.Notes() {
		res.Problems = append(res.Problems, Problem{Message: n})
	}
	comps, problems := inventory(c, &opt, frameFilesByModule(c))
	res.Problems = append(res.Problems, problems...)
	defer func() {
		for _, comp := range comps {
			comp.repo.close()
		}
	}()
	if err := fetchComponents(ctx, ca, comps, &opt, res); err != nil {
		return nil, err
	}
	res.Frames = mapFrames(c, comps, opt.Config)
	if err := checkoutComponents(ctx, ca, comps, &opt, res); err != nil {
		return nil, err
	}
	res.Problems = append(res.Problems, verifyComponents(c, comps, res.Frames, opt.Sysroot)...)
	for _, comp := range comps {
		res.Components = append(res.Components, comp.Component)
	}
	res.Frames = dropFailedFrames(res.Frames, comps)
	if opt.CheckedOut != nil {
		early := *res
		early.Problems = append([]Problem(nil), res.Problems...)
		for i := range early.Problems {
			early.Problems[i].Message = cleanMessage(early.Problems[i].Message)
		}
		opt.CheckedOut(&early)
	}
	if err := reviewAndFix(ctx, ca, c, comps, &opt, res); err != nil {
		return nil, err
	}
	markUnverified(res)
	for i := range res.Problems {
		res.Problems[i].Message = cleanMessage(res.Problems[i].Message)
	}
	return res, nil
}

// cleanMessage makes text from remotes and errors fit to show: control
// characters (a remote's error packet ends in NUL) are dropped, runs of
// white space become one space.
func cleanMessage(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
}

// frameFilesByModule lists the files that frames of each module name, for
// the inventory (.git near them) and the checkouts.
func frameFilesByModule(c *analysis.Crash) map[string][]string {
	frameFiles := map[string][]string{}
	for _, t := range c.Threads {
		for _, f := range t.Frames {
			if f.File != "" && f.Module != "" {
				frameFiles[f.Module] = appendUnique(frameFiles[f.Module], frameSourcePath(&f))
			}
		}
	}
	return frameFiles
}

// fetchComponents fetches every component; one that fails is marked failed
// and becomes a problem. The error is ctx's, when it ends.
func fetchComponents(ctx context.Context, ca *cache, comps []*component, opt *Options, res *Result) error {
	for i, comp := range comps {
		if comp.lineless {
			continue // no frame to map: nothing to fetch
		}
		opt.progress("fetching "+comp.Name+" "+comp.Revision, i, len(comps))
		if err := fetchComponent(ctx, ca, comp, opt); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			comp.failed = true
			res.Problems = append(res.Problems, Problem{Module: strings.Join(comp.Modules, ", "),
				Message: fmt.Sprintf("%s %s from %s: %v", comp.Name, comp.Revision, comp.Repo, err)})
		}
	}
	return nil
}

// mapFrames maps every frame's file: explicit sourceMap rules first, then
// the longest path suffix in the frame's own component, then in any
// component. It records the directories each component must check out.
func mapFrames(c *analysis.Crash, comps []*component, cfg *Config) []FrameSource {
	byModule := map[string]*component{}
	for _, comp := range comps {
		if comp.failed {
			continue
		}
		for _, m := range comp.Modules {
			byModule[m] = comp
		}
	}
	type mapped struct {
		comp *component
		path string
	}
	memo := map[string]mapped{}
	frames := []FrameSource{}
	for _, t := range c.Threads {
		for _, f := range t.Frames {
			if f.File == "" {
				continue
			}
			fs := FrameSource{Thread: t.ID, Index: f.Index, File: f.File, Line: f.Line, Function: f.Function}
			if p, ok := applySourceMap(cfg, f.File); ok {
				fs.Source = p
				frames = append(frames, fs)
				continue
			}
			key := f.Module + "\x00" + f.File
			mp, ok := memo[key]
			if !ok {
				mp = mapFrame(byModule[f.Module], comps, f.File, frameSourcePath(&f))
				memo[key] = mp
				if mp.comp != nil {
					mp.comp.wantDirs[path.Dir(mp.path)] = true
				}
			}
			if mp.comp == nil {
				continue
			}
			fs.Component, fs.Path = mp.comp.Name, mp.path
			fs.Source = filepath.Join(mp.comp.Checkout, filepath.FromSlash(mp.path))
			frames = append(frames, fs)
		}
	}
	return frames
}

// checkoutComponents writes the checkout of every component fetched; one
// that fails is marked failed and becomes a problem. The error is ctx's,
// when it ends.
func checkoutComponents(ctx context.Context, ca *cache, comps []*component, opt *Options, res *Result) error {
	for i, comp := range comps {
		if comp.failed {
			continue
		}
		opt.progress("writing "+comp.Name+" "+comp.Revision, i, len(comps))
		if err := checkoutComponent(ctx, ca, comp, opt); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			comp.failed = true
			res.Problems = append(res.Problems, Problem{Module: strings.Join(comp.Modules, ", "),
				Message: fmt.Sprintf("checking out %s %s: %v", comp.Name, comp.Commit, err)})
		}
	}
	return nil
}

// dropFailedFrames removes the frames of components whose checkout failed:
// they have no source.
func dropFailedFrames(all []FrameSource, comps []*component) []FrameSource {
	failed := map[string]bool{}
	for _, comp := range comps {
		if comp.failed {
			failed[comp.Name] = true
		}
	}
	frames := all[:0]
	for _, fs := range all {
		if fs.Component == "" || !failed[fs.Component] {
			frames = append(frames, fs)
		}
	}
	return frames
}

// reviewAndFix reviews upstream history (unless disabled) and answers
// Options.Fix. The error is ctx's, when it ends.
func reviewAndFix(ctx context.Context, ca *cache, c *analysis.Crash, comps []*component, opt *Options, res *Result) error {
	if !opt.Review.Disabled {
		reviews, problems := reviewCrash(ctx, ca, c, comps, res.Frames, opt)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		res.Upstream = append(res.Upstream, reviews...)
		res.Problems = append(res.Problems, problems...)
	}
	markBackports(res, comps)
	if opt.Fix == "" {
		return nil
	}
	if cve, ok := cveID(opt.Fix); ok {
		res.Fix = fixFromBackports(comps, &FixCheck{Commit: cve}, cve)
		return nil
	}
	fc, err := checkFix(ctx, ca, c, comps, res.Frames, opt)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if fc == nil || !fc.Included {
		if bc := fixFromBackports(comps, fc, ""); bc.Included {
			res.Fix = bc
			return nil
		}
	}
	if err != nil {
		res.Problems = append(res.Problems, Problem{Message: "--fix " + opt.Fix + ": " + err.Error()})
	}
	res.Fix = fc
	return nil
}

// mapFrame finds the checkout file for a DWARF file name (abs: joined
// with its compilation directory): in the frame's own component if it has
// one there, else in whichever component shares the longest suffix with
// it. A working repository found near the sources claims only the files
// it tracks, by their place in it.
func mapFrame(own *component, comps []*component, file, abs string) (m struct {
	comp *component
	path string
}) {
	if own != nil && own.index != nil {
		if p, n := own.match(file, abs); n > 0 {
			m.comp, m.path = own, p
			return m
		}
	}
	best := 0
	for _, comp := range comps {
		if comp.failed || comp.index == nil || comp == own {
			continue
		}
		// One shared element (the base name alone) is too weak across
		// components: every project has a util.h.
		if p, n := comp.match(file, abs); n > best && n >= 2 {
			best, m.comp, m.path = n, comp, p
		}
	}
	return m
}

// fetchComponent resolves a component's revision into a commit and lists
// its files, under the cache lock for its repository.
func fetchComponent(ctx context.Context, ca *cache, comp *component, opt *Options) error {
	key := repoKey(comp.Repo)
	unlock, err := ca.lock(ctx, key, func() {
		opt.progress("waiting for another faultline process fetching "+comp.Repo, 0, 0)
	})
	if err != nil {
		return err
	}
	defer unlock()
	r, err := ca.openRepository(comp.Repo)
	if err != nil {
		return err
	}
	comp.repo = r
	f := &fetcher{repo: r, offline: opt.Offline, report: func(s string) { opt.progress(s, 0, 0) }}
	var errs []error
	for _, rev := range comp.revisions {
		commit, err := f.resolve(ctx, rev)
		if err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			continue
		}
		comp.Revision, comp.Commit = rev, commit.Hash.String()
		tree, err := commit.Tree()
		if err != nil {
			return err
		}
		files, unsafe, err := listTree(ctx, tree)
		if err != nil {
			return err
		}
		_ = unsafe // never written; listed paths are all safe
		comp.files = files
		comp.index = newSuffixIndex(files)
		if r.local {
			comp.Checkout = r.url
		}
		if r.local && comp.Origin == "git" {
			comp.tracked = make(map[string]bool, len(files))
			for _, f := range files {
				comp.tracked[f.path] = true
			}
		}
		if !r.local {
			comp.Checkout = ca.checkoutDir(key, comp.Commit)
		}
		return nil
	}
	return errors.Join(errs...)
}

// checkoutComponent writes the component's files: all of them, or for a
// repository over the sparse threshold, the directories frames point into.
func checkoutComponent(ctx context.Context, ca *cache, comp *component, opt *Options) error {
	if comp.repo == nil || comp.repo.local {
		return nil
	}
	threshold := opt.SparseThreshold
	if threshold <= 0 {
		threshold = 20000
	}
	var dirs []string
	if len(comp.files) > threshold {
		comp.Sparse = true
		dirs = []string{}
		for d := range comp.wantDirs {
			if !sparseHas(comp.Checkout, d) {
				dirs = append(dirs, d)
			}
		}
		if len(dirs) == 0 {
			return nil
		}
		sort.Strings(dirs)
	}
	unlock, err := ca.lock(ctx, comp.repo.key, func() {
		opt.progress("waiting for another faultline process writing "+comp.Name, 0, 0)
	})
	if err != nil {
		return err
	}
	defer unlock()
	return checkout(ctx, comp.repo, comp.files, comp.Checkout, dirs, func(done, total int) {
		opt.progress("writing "+comp.Name+" "+comp.Revision, done, total)
	})
}

// Apply records a result in the crash model: each mapped frame's Source
// and each module's Component.
func Apply(c *analysis.Crash, r *Result) {
	src := map[[2]int]string{}
	for _, f := range r.Frames {
		src[[2]int{f.Thread, f.Index}] = f.Source
	}
	for ti := range c.Threads {
		t := &c.Threads[ti]
		for fi := range t.Frames {
			if s, ok := src[[2]int{t.ID, t.Frames[fi].Index}]; ok {
				t.Frames[fi].Source = s
			}
		}
	}
	for _, comp := range r.Components {
		for _, m := range comp.Modules {
			for i := range c.Modules {
				if c.Modules[i].Path == m {
					c.Modules[i].Component = &analysis.Component{Name: comp.Name, Version: comp.Version, Repo: comp.Repo, Revision: comp.Revision}
				}
			}
		}
	}
}

// match maps a DWARF file name onto the component's files: a working
// repository guessed from the sources' location by its tracked files
// (localMatch), any other by the longest path suffix.
func (comp *component) match(file, abs string) (string, int) {
	if comp.Origin == "git" && comp.repo != nil && comp.repo.local {
		return comp.localMatch(abs)
	}
	return comp.index.match(file)
}

var appendUnique = moduleorigin.AppendUnique
