package gitsrc

import (
	"path/filepath"
	"strings"
)

// Package is the distribution package that installed a module, as its
// package manager's database says.
type Package struct {
	// Manager is the database: dpkg, rpm or conda.
	Manager string `json:"manager"`
	Name    string `json:"name"`
	Version string `json:"version"`
	// Source and SourceVersion are the source package (Debian's
	// "Source:", rpm's SOURCERPM).
	Source        string `json:"source,omitempty"`
	SourceVersion string `json:"sourceVersion,omitempty"`
	// Upstream is the upstream release the version packages: epoch,
	// distribution revision and repack suffixes dropped.
	Upstream string `json:"upstream,omitempty"`
	// UpstreamName is the upstream's own name (Debian copyright's
	// Upstream-Name), when the package says.
	UpstreamName string `json:"upstreamName,omitempty"`

	// upstreamRepo is a git repository the package names as its source.
	upstreamRepo string
}

// packageOwners answers which package installed a module, asking the
// package databases once for all the crash's modules, on first use.
type packageOwners struct {
	sysroot string
	paths   []string
	owners  map[string]*Package
}

func newPackageOwners(sysroot string, paths []string) *packageOwners {
	return &packageOwners{sysroot: sysroot, paths: paths}
}

// of returns the package that installed module, or nil.
func (po *packageOwners) of(module string) *Package {
	if po.owners == nil {
		po.load()
	}
	return po.owners[module]
}

func (po *packageOwners) load() {
	po.owners = map[string]*Package{}
	for p, dp := range dpkgOwners(po.sysroot, po.paths) {
		pkg := &Package{Manager: "dpkg", Name: dp.Name, Version: dp.Version, Source: dp.Source,
			SourceVersion: dp.SourceVersion, Upstream: debianUpstream(firstNonEmpty(dp.SourceVersion, dp.Version))}
		cr := readDebianCopyright(po.sysroot, dp.Name)
		pkg.UpstreamName, pkg.upstreamRepo = cr.UpstreamName, cr.repositoryURL()
		po.owners[p] = pkg
	}
	var rest []string
	for _, p := range po.paths {
		if po.owners[p] == nil {
			rest = append(rest, p)
		}
	}
	for p, pkg := range rpmOwners(po.sysroot, rest) {
		po.owners[p] = pkg
	}
	for _, p := range rest {
		if po.owners[p] == nil {
			if pkg := condaOwner(po.sysroot, p); pkg != nil {
				po.owners[p] = pkg
			}
		}
	}
}

// sysrootPath is p under sysroot.
func sysrootPath(sysroot, p string) string {
	if sysroot == "" {
		return p
	}
	return filepath.Join(sysroot, p)
}

// splitRPMSource splits a source rpm's file name
// ("zlib-1.2.13-3.fc38.src.rpm") into its name and version-release.
func splitRPMSource(srpm string) (string, string) {
	s := strings.TrimSuffix(strings.TrimSuffix(srpm, ".rpm"), ".src")
	i := strings.LastIndexByte(s, '-')
	if i <= 0 {
		return s, ""
	}
	j := strings.LastIndexByte(s[:i], '-')
	if j <= 0 {
		return s[:i], s[i+1:]
	}
	return s[:j], s[j+1:]
}
