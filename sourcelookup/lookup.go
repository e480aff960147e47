package sourcelookup

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/faultline-dev/faultline/analysis/debuginfo/debugfile"
	"github.com/faultline-dev/faultline/analysis/model"
)

// maxIndexedFiles caps the workspace walk behind suffix matching.
const maxIndexedFiles = 200_000

// Config says where to look.
type Config struct {
	// Folders are the editor's workspace folders (may be empty).
	Folders []string
	// SourceMap maps build-machine path prefixes to local ones (cpptools'
	// and CodeLLDB's "sourceMap", gdb's substitute-path); the longest
	// matching prefix wins.
	SourceMap map[string]string
	// CacheDir is the checkout cache of the sources engine, searched like a
	// workspace folder.
	CacheDir string
	// Remote, when set, is gdb's last step: debuginfod's /source for the
	// files of a crash no local step finds (see Resolver.Fetch).
	Remote *debugfile.Debuginfod
}

// Resolver maps frames to local files (see the package comment). It is safe
// for concurrent use and remembers its answers.
type Resolver struct {
	rules  []mapRule // longest prefix first
	roots  []string  // folders, then the cache directory
	remote *debugfile.Debuginfod

	mu      sync.Mutex
	memo    map[memoKey]string
	index   map[string][]string // base name → files; nil until first needed
	fetched map[fetchKey]string // the last Fetch's files, by module and path
	origin  map[string]string   // fetched file → where it came from
}

type mapRule struct{ from, to string }

type memoKey struct{ file, compDir, source, exe string }

// New returns a Resolver for cfg.
func New(cfg Config) *Resolver {
	r := &Resolver{memo: map[memoKey]string{}, remote: cfg.Remote}
	for from, to := range cfg.SourceMap {
		if from != "" && to != "" {
			r.rules = append(r.rules, mapRule{filepath.Clean(from), filepath.Clean(ExpandHome(to))})
		}
	}
	sort.Slice(r.rules, func(i, j int) bool {
		if len(r.rules[i].from) != len(r.rules[j].from) {
			return len(r.rules[i].from) > len(r.rules[j].from)
		}
		return r.rules[i].from < r.rules[j].from
	})
	r.roots = append(r.roots, cfg.Folders...)
	if cfg.CacheDir != "" {
		r.roots = append(r.roots, ExpandHome(cfg.CacheDir))
	}
	return r
}

// Resolve returns the file on this machine for fr, or "" when it
// resolves nowhere: a local file, else the copy the last Fetch brought.
// exe is the crashed program's executable on this machine ("" if
// unknown): among several equally good copies of a file, the one nearest
// to it wins.
func (r *Resolver) Resolve(fr *model.Frame, exe string) string {
	if fr == nil || (fr.File == "" && fr.Source == "") {
		return ""
	}
	if p := r.resolveLocal(fr, exe); p != "" {
		return p
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fetched[fetchKeyOf(fr)]
}

// resolveLocal is Resolve without the fetched copies, remembered.
func (r *Resolver) resolveLocal(fr *model.Frame, exe string) string {
	key := memoKey{fr.File, fr.CompDir, fr.Source, exe}
	r.mu.Lock()
	p, ok := r.memo[key]
	r.mu.Unlock()
	if ok {
		return p
	}
	p = r.lookup(fr, exe)
	if p != "" {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
	}
	r.mu.Lock()
	r.memo[key] = p
	r.mu.Unlock()
	return p
}

// Lookup resolves a bare file name (no compilation directory, no
// executable), for callers that have only a name.
func (r *Resolver) Lookup(name string) string {
	return r.Resolve(&model.Frame{File: name}, "")
}

func (r *Resolver) lookup(fr *model.Frame, exe string) string {
	if fr.Source != "" && IsFile(fr.Source) {
		return Abs(fr.Source)
	}
	if fr.File == "" {
		return ""
	}
	clean, full := names(fr)
	if p := r.mapped(full, clean); p != "" {
		return p
	}
	if filepath.IsAbs(full) {
		if IsFile(full) && r.inWorkspace(full) {
			return full
		}
		// A copy in the workspace at the same directory and name wins over
		// the build path outside it: the editor shows the tree the user
		// opened, and the build path here may be another, older checkout.
		if p, score := r.bySuffixScore(full, exe); score >= 2 {
			return p
		}
		if IsFile(full) {
			return full
		}
	}
	if !filepath.IsAbs(clean) {
		for _, root := range r.roots {
			if p := filepath.Join(root, clean); IsFile(p) {
				return Abs(p)
			}
		}
	}
	p, _ := r.bySuffixScore(full, exe)
	return p
}

// names returns fr's file name cleaned, and the name as the compiler saw
// it: comp_dir/name for a relative name under an absolute comp_dir.
func names(fr *model.Frame) (clean, full string) {
	clean = filepath.Clean(fr.File)
	full = clean
	if !filepath.IsAbs(clean) && fr.CompDir != "" && filepath.IsAbs(fr.CompDir) {
		full = filepath.Join(fr.CompDir, clean)
	}
	return clean, full
}

// mapped applies the sourceMap rules to the full name, then to the name
// as written.
func (r *Resolver) mapped(names ...string) string {
	for _, name := range names {
		for _, m := range r.rules {
			if rest, ok := cutPathPrefix(name, m.from); ok {
				if p := filepath.Join(m.to, rest); IsFile(p) {
					return Abs(p)
				}
			}
		}
	}
	return ""
}

// bySuffixScore finds the indexed file sharing the most trailing path elements
// with name (at least the base name); ties go to the copy nearest the
// executable (the longest common directory prefix), then to the shortest
// path. It returns the number of trailing elements shared, too.
func (r *Resolver) bySuffixScore(name, exe string) (string, int) {
	r.mu.Lock()
	if r.index == nil {
		r.index = indexFiles(r.roots)
	}
	cands := r.index[filepath.Base(name)]
	r.mu.Unlock()
	want := strings.Split(filepath.ToSlash(name), "/")
	exeDir := ""
	if exe != "" {
		exeDir = filepath.Dir(Abs(exe))
	}
	best, bestScore, bestNear := "", 0, -1
	for _, cand := range cands {
		have := strings.Split(filepath.ToSlash(cand), "/")
		score := 0
		for score < len(want) && score < len(have) &&
			want[len(want)-1-score] == have[len(have)-1-score] {
			score++
		}
		near := commonPrefixElems(exeDir, cand)
		switch {
		case score > bestScore,
			score == bestScore && score > 0 && near > bestNear,
			score == bestScore && score > 0 && near == bestNear && len(cand) < len(best):
			best, bestScore, bestNear = cand, score, near
		}
	}
	return best, bestScore
}

// inWorkspace reports whether p lies under a workspace folder or the cache.
func (r *Resolver) inWorkspace(p string) bool {
	for _, root := range r.roots {
		if _, ok := cutPathPrefix(p, filepath.Clean(root)); ok {
			return true
		}
	}
	return false
}

// commonPrefixElems counts the leading path elements a and b share.
func commonPrefixElems(a, b string) int {
	if a == "" {
		return 0
	}
	x := strings.Split(filepath.ToSlash(a), "/")
	y := strings.Split(filepath.ToSlash(b), "/")
	n := 0
	for n < len(x) && n < len(y) && x[n] == y[n] {
		n++
	}
	return n
}

// indexFiles lists regular files under roots by base name, skipping VCS,
// dependency and hidden directories.
func indexFiles(roots []string) map[string][]string {
	idx := map[string][]string{}
	n := 0
	for _, root := range roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				base := d.Name()
				if p != root && (strings.HasPrefix(base, ".") || base == "node_modules") {
					return fs.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			if n++; n > maxIndexedFiles {
				return fs.SkipAll
			}
			idx[d.Name()] = append(idx[d.Name()], Abs(p))
			return nil
		})
	}
	return idx
}

// cutPathPrefix reports whether prefix is a whole-element prefix of p and
// returns the rest.
func cutPathPrefix(p, prefix string) (string, bool) {
	if p == prefix {
		return "", true
	}
	if !strings.HasPrefix(p, prefix) {
		return "", false
	}
	if strings.HasSuffix(prefix, string(filepath.Separator)) {
		return p[len(prefix):], true
	}
	if p[len(prefix)] == filepath.Separator {
		return p[len(prefix)+1:], true
	}
	return "", false
}

// IsFile reports whether p is a regular file.
func IsFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// Abs is filepath.Abs, or p itself when that fails.
func Abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// ExpandHome expands a leading "~/" to the home directory.
func ExpandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}

// Executable is crash's executable on this machine, for Resolve's exe:
// the file that matched the core (--exe, a sysroot, debuginfod) when it
// is not at the path the core names.
func Executable(crash *model.Crash) string {
	for _, m := range crash.Modules {
		if m.Path == crash.Dump.Executable && m.File != "" {
			return m.File
		}
	}
	return crash.Dump.Executable
}
