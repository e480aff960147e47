// Package pkgdb reads what package managers' databases say about the
// files of a crash: which package installed a module (dpkg, merged /usr
// included; rpm; conda-meta), its version and source package, the upstream
// release that version packages, and what a Debian package's copyright and
// changelog files say (its upstream's repository; the CVEs and upstream
// commits each upload applied).
//
// Everything read comes from the machine or a sysroot (a container's
// root): every file read is capped, and rpm is run with a time limit.
package pkgdb

import (
	"io"
	"os"
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

	// Repository is a git repository the package names as its upstream
	// source (Debian copyright's Source on a git host).
	Repository string `json:"repository,omitempty"`
	// RecordedBy names the crash reporter that recorded the package with
	// the core (apport, abrt): its version is the one installed when the
	// program crashed, not what this machine has now.
	RecordedBy string `json:"recordedBy,omitempty"`
}

// Owners answers which package installed a module, asking the package
// databases once for all the crash's modules, on first use.
type Owners struct {
	sysroot string
	paths   []string
	owners  map[string]*Package
}

// NewOwners prepares the lookup of the given module paths under sysroot
// ("" for this machine).
func NewOwners(sysroot string, paths []string) *Owners {
	return &Owners{sysroot: sysroot, paths: paths}
}

// Of returns the package that installed module, or nil.
func (po *Owners) Of(module string) *Package {
	if po.owners == nil {
		po.load()
	}
	return po.owners[module]
}

func (po *Owners) load() {
	po.owners = map[string]*Package{}
	for p, dp := range dpkgOwners(po.sysroot, po.paths) {
		pkg := &Package{Manager: "dpkg", Name: dp.Name, Version: dp.Version, Source: dp.Source,
			SourceVersion: dp.SourceVersion, Upstream: DebianUpstream(firstNonEmpty(dp.SourceVersion, dp.Version))}
		cr := readDebianCopyright(po.sysroot, dp.Name)
		pkg.UpstreamName, pkg.Repository = cr.UpstreamName, cr.repositoryURL()
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

// maxSmallFile caps the database files read whole (dpkg lists, copyright files).
const maxSmallFile = 1 << 20

func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxSmallFile))
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func appendUnique(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
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
