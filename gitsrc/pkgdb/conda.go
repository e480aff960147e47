package pkgdb

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

const (
	// maxCondaRecords caps the conda-meta records read for one environment.
	maxCondaRecords = 4096
	// maxCondaRecord caps one record (its "files" list can be long).
	maxCondaRecord = 16 << 20
)

// condaRecord is the part of a conda-meta/NAME-VERSION-BUILD.json record
// (conda's PrefixRecord) that says which package installed a file.
type condaRecord struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	Build   string   `json:"build"`
	Channel string   `json:"channel"`
	Files   []string `json:"files"`
}

// condaPrefix finds the conda environment (the directory holding
// conda-meta) that a module path lies in.
func condaPrefix(sysroot, module string) (string, bool) {
	dir := filepath.Dir(module)
	for range 8 {
		if st, err := os.Stat(filepath.Join(sysrootPath(sysroot, dir), "conda-meta")); err == nil && st.IsDir() {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", false
}

// condaOwner returns the conda package that installed module, from its
// environment's conda-meta records, or nil.
func condaOwner(sysroot, module string) *Package {
	prefix, ok := condaPrefix(sysroot, module)
	if !ok {
		return nil
	}
	rel, err := filepath.Rel(prefix, module)
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil
	}
	rel = filepath.ToSlash(rel)
	recs, _ := filepath.Glob(filepath.Join(sysrootPath(sysroot, prefix), "conda-meta", "*.json"))
	sort.Strings(recs)
	if len(recs) > maxCondaRecords {
		recs = recs[:maxCondaRecords]
	}
	for _, p := range recs {
		r, ok := readCondaRecord(p)
		if !ok {
			continue
		}
		for _, f := range r.Files {
			if f == rel {
				return &Package{Manager: "conda", Name: r.Name, Version: r.Version + "-" + r.Build,
					Source: r.Name, SourceVersion: r.Version, Upstream: r.Version}
			}
		}
	}
	return nil
}

func readCondaRecord(path string) (condaRecord, bool) {
	var r condaRecord
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxCondaRecord {
		return r, false
	}
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &r) != nil || r.Name == "" {
		return r, false
	}
	return r, true
}
