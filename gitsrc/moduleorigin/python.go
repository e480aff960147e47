package moduleorigin

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/faultline-dev/faultline/analysis/regular"
	"github.com/faultline-dev/faultline/internal/lazyregexp"
)

// maxSmallFile caps metadata files read (METADATA, direct_url.json, version.py, dpkg lists).
const maxSmallFile = 1 << 20

func readSmall(path string) ([]byte, error) {
	f, _, err := regular.Open(path) // paths near a module's, which the core names
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxSmallFile))
}

// PythonFacts is what a Python installation says about the package a
// module belongs to.
type PythonFacts struct {
	Dist, Version, Repo, Commit string
}

// SitePackage splits a module path inside a Python environment into the
// site-packages directory and the top-level package it belongs to.
func SitePackage(module string) (site, pkg string, ok bool) {
	for _, marker := range []string{"/site-packages/", "/dist-packages/"} {
		i := strings.LastIndex(module, marker)
		if i < 0 {
			continue
		}
		site = module[:i+len(marker)-1]
		rest := module[i+len(marker):]
		if j := strings.IndexByte(rest, '/'); j > 0 {
			pkg = rest[:j]
		} else {
			// A top-level extension module: name.cpython-312-x86_64-linux-gnu.so
			pkg = strings.SplitN(rest, ".", 2)[0]
		}
		return site, pkg, pkg != ""
	}
	return "", "", false
}

var (
	metadataVersionRE = lazyregexp.New(`(?m)^Version:\s*(\S+)`)
	pyCommitRE        = lazyregexp.New(`(?m)^\s*(?:git_version|_git_hash|__git_hash__|git_hash|__commit_id__|commit_id|_git_revision)\s*(?::\s*str\s*)?=\s*['"]([0-9a-f]{7,40})['"]`)
	pyVersionRE       = lazyregexp.New(`(?m)^\s*(?:__version__|version|_version)\s*(?::\s*str\s*)?=\s*['"]([^'"]+)['"]`)
)

// ReadPython reads the dist-info of pkg's distribution (METADATA version,
// direct_url.json VCS commit, PEP 610) and the package's version files
// (torch/version.py git_version, jaxlib/version.py, triton, vllm/_version.py).
func ReadPython(site, pkg string) PythonFacts {
	var pf PythonFacts
	entries, _ := os.ReadDir(site)
	want := normalizeName(pkg)
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !strings.HasSuffix(name, ".dist-info") {
			continue
		}
		base := strings.TrimSuffix(name, ".dist-info")
		dist, ver, _ := strings.Cut(base, "-")
		if normalizeName(dist) != want && !topLevelHas(filepath.Join(site, name), pkg) {
			continue
		}
		pf.Dist, pf.Version = dist, ver
		if b, err := readSmall(filepath.Join(site, name, "METADATA")); err == nil {
			if m := metadataVersionRE.FindSubmatch(b); m != nil {
				pf.Version = string(m[1])
			}
		}
		if b, err := readSmall(filepath.Join(site, name, "direct_url.json")); err == nil {
			var du struct {
				URL     string `json:"url"`
				VCSInfo struct {
					VCS      string `json:"vcs"`
					CommitID string `json:"commit_id"`
				} `json:"vcs_info"`
			}
			if json.Unmarshal(b, &du) == nil && du.VCSInfo.VCS == "git" && FullHashRE.MatchString(du.VCSInfo.CommitID) {
				pf.Repo, pf.Commit = strings.TrimPrefix(du.URL, "git+"), du.VCSInfo.CommitID
			}
		}
		break
	}
	for _, vf := range []string{"version.py", "_version.py", "__init__.py"} {
		b, err := readSmall(filepath.Join(site, pkg, vf))
		if err != nil {
			continue
		}
		if pf.Commit == "" {
			if m := pyCommitRE.FindSubmatch(b); m != nil {
				pf.Commit = string(m[1])
			}
		}
		if pf.Version == "" {
			if m := pyVersionRE.FindSubmatch(b); m != nil {
				pf.Version = string(m[1])
			}
		}
		if pf.Dist == "" && (pf.Commit != "" || pf.Version != "") {
			pf.Dist = pkg
		}
	}
	return pf
}

func topLevelHas(distInfo, pkg string) bool {
	b, err := readSmall(filepath.Join(distInfo, "top_level.txt"))
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) == pkg {
			return true
		}
	}
	return false
}
