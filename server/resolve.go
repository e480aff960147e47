package server

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/faultline-dev/faultline/analysis"
)

// maxIndexedFiles caps the workspace walk behind suffix matching.
const maxIndexedFiles = 200_000

// resolver maps a frame's source file (a DWARF name, often relative to an
// unknown compilation directory or under a build machine's prefix) to a file
// on this machine. In order: the checkout the sources engine found
// (Frame.Source), sourceMap prefix rules, an absolute path inside the
// workspace, a workspace file with the same directory and name as an
// absolute path elsewhere, that absolute path itself, the name joined to
// each workspace folder and to the cache directory, and finally
// the workspace file sharing the longest path suffix with the name, so
// "/build/x/src/lib/a.cpp" finds "<folder>/src/lib/a.cpp" with no setting.
type resolver struct {
	folders []string
	rules   []mapRule // longest prefix first
	roots   []string  // folders, then the cache directory

	mu    sync.Mutex
	memo  map[[2]string]string
	index map[string][]string // base name → files; nil until first needed
}

type mapRule struct{ from, to string }

func newResolver(folders []string, st Settings) *resolver {
	r := &resolver{folders: folders, memo: map[[2]string]string{}}
	for from, to := range st.SourceMap {
		if from != "" && to != "" {
			r.rules = append(r.rules, mapRule{filepath.Clean(from), filepath.Clean(expandHome(to))})
		}
	}
	sort.Slice(r.rules, func(i, j int) bool {
		if len(r.rules[i].from) != len(r.rules[j].from) {
			return len(r.rules[i].from) > len(r.rules[j].from)
		}
		return r.rules[i].from < r.rules[j].from
	})
	r.roots = append(r.roots, folders...)
	if st.CacheDir != "" {
		r.roots = append(r.roots, expandHome(st.CacheDir))
	}
	return r
}

// resolve returns the local file for fr, or "" when it resolves nowhere.
func (r *resolver) resolve(fr *analysis.Frame) string {
	if fr.File == "" && fr.Source == "" {
		return ""
	}
	key := [2]string{fr.File, fr.Source}
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.memo[key]; ok {
		return p
	}
	p := r.lookup(fr.File, fr.Source)
	if p != "" {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
	}
	r.memo[key] = p
	return p
}

func (r *resolver) lookup(name, source string) string {
	if source != "" && isFile(source) {
		return abs(source)
	}
	if name == "" {
		return ""
	}
	clean := filepath.Clean(name)
	for _, m := range r.rules {
		if rest, ok := cutPathPrefix(clean, m.from); ok {
			if p := filepath.Join(m.to, rest); isFile(p) {
				return abs(p)
			}
		}
	}
	if filepath.IsAbs(clean) {
		if isFile(clean) && r.inWorkspace(clean) {
			return clean
		}
		// A copy of the file in the workspace (same directory and name)
		// wins over the build path: the user opened the tree they read,
		// and the build path on this machine may be another, older copy.
		if p, score := r.bySuffixScore(clean); score >= 2 {
			return p
		}
		if isFile(clean) {
			return clean
		}
	} else {
		for _, root := range r.roots {
			if p := filepath.Join(root, clean); isFile(p) {
				return abs(p)
			}
		}
	}
	return r.bySuffix(clean)
}

// bySuffix finds the indexed file sharing the most trailing path elements
// with name (at least the base name); ties go to the shortest path.
func (r *resolver) bySuffix(name string) string {
	p, _ := r.bySuffixScore(name)
	return p
}

// inWorkspace reports whether p lies under a workspace folder or the cache.
func (r *resolver) inWorkspace(p string) bool {
	for _, root := range r.roots {
		if _, ok := cutPathPrefix(p, filepath.Clean(root)); ok {
			return true
		}
	}
	return false
}

// bySuffixScore is bySuffix with the number of trailing path elements the
// best file shares with name.
func (r *resolver) bySuffixScore(name string) (string, int) {
	if r.index == nil {
		r.index = indexFiles(r.roots)
	}
	want := strings.Split(filepath.ToSlash(name), "/")
	best, bestScore := "", 0
	for _, cand := range r.index[filepath.Base(name)] {
		have := strings.Split(filepath.ToSlash(cand), "/")
		score := 0
		for score < len(want) && score < len(have) &&
			want[len(want)-1-score] == have[len(have)-1-score] {
			score++
		}
		if score > bestScore || (score == bestScore && score > 0 && len(cand) < len(best)) {
			best, bestScore = cand, score
		}
	}
	return best, bestScore
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
			idx[d.Name()] = append(idx[d.Name()], abs(p))
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

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}
