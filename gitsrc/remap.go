package gitsrc

import (
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// suffixIndex finds the repository file that a build path names, by the
// longest run of trailing path elements the two share. A build path such as
// /longer_pathname_so_that_rpms_can_support_packaging_the_debug_info_for_all_os_profiles/src/rocm-systems/projects/clr/rocclr/device/device.cpp
// thus lands on projects/clr/rocclr/device/device.cpp with no configuration.
type suffixIndex struct {
	byBase map[string][]string
}

func newSuffixIndex(files []treeFile) *suffixIndex {
	ix := &suffixIndex{byBase: make(map[string][]string, len(files))}
	for _, f := range files {
		b := path.Base(f.path)
		ix.byBase[b] = append(ix.byBase[b], f.path)
	}
	return ix
}

// match returns the repository path sharing the most trailing elements with
// file, and how many it shares (0: none). Among equally long matches the
// shortest repository path wins, then the first in lexical order, so the
// answer does not depend on map order.
func (ix *suffixIndex) match(file string) (string, int) {
	els := splitPath(file)
	if len(els) == 0 {
		return "", 0
	}
	cands := ix.byBase[els[len(els)-1]]
	best, bestN := "", 0
	for _, c := range cands {
		ce := strings.Split(c, "/")
		n := 0
		for n < len(ce) && n < len(els) && ce[len(ce)-1-n] == els[len(els)-1-n] {
			n++
		}
		if n > bestN || (n == bestN && n > 0 && (len(c) < len(best) || (len(c) == len(best) && c < best))) {
			best, bestN = c, n
		}
	}
	return best, bestN
}

// splitPath splits a DWARF file name into clean elements, dropping ".",
// resolving ".." lexically and ignoring the leading "/".
func splitPath(p string) []string {
	p = strings.ReplaceAll(p, "\\", "/")
	var out []string
	for _, el := range strings.Split(p, "/") {
		switch el {
		case "", ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, el)
		}
	}
	return out
}

// applySourceMap rewrites file by the longest matching explicit rule
// ("from" prefix → "to" directory) and returns the result when that file
// exists on this machine. Relative targets are relative to the
// configuration file's directory.
func applySourceMap(c *Config, file string) (string, bool) {
	if c == nil || len(c.SourceMap) == 0 {
		return "", false
	}
	froms := make([]string, 0, len(c.SourceMap))
	for from := range c.SourceMap {
		froms = append(froms, from)
	}
	sort.Slice(froms, func(i, j int) bool { return len(froms[i]) > len(froms[j]) })
	for _, from := range froms {
		f := strings.TrimSuffix(from, "/")
		if file != f && !strings.HasPrefix(file, f+"/") {
			continue
		}
		to := c.SourceMap[from]
		if !filepath.IsAbs(to) && c.dir != "" {
			to = filepath.Join(c.dir, to)
		}
		p := filepath.Join(to, filepath.FromSlash(strings.TrimPrefix(file[len(f):], "/")))
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, true
		}
	}
	return "", false
}
