package gitsrc

import (
	"path/filepath"
	"strings"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/gitsrc/pkgdb"
)

// reportedPackages are the packages a crash reporter recorded with the
// core (analysis.Crash.Packages: apport's Package and Dependencies, an
// ABRT problem directory's package and dso_list), at the versions
// installed when the program crashed: the inventory takes them over what
// this machine's databases say now.
type reportedPackages struct {
	byFile  map[string]*analysis.Package
	byName  map[string]*analysis.Package
	program *analysis.Package
	exe     string
}

func newReportedPackages(c *analysis.Crash) *reportedPackages {
	rp := &reportedPackages{byFile: map[string]*analysis.Package{}, byName: map[string]*analysis.Package{}, exe: c.Dump.Executable}
	for i := range c.Packages {
		p := &c.Packages[i]
		if p.Program && rp.program == nil {
			rp.program = p
		}
		if _, ok := rp.byName[p.Name]; !ok {
			rp.byName[p.Name] = p
		}
		for _, f := range p.Files {
			rp.byFile[f] = p
		}
	}
	return rp
}

// of returns the package of module: the one the reporter lists the file
// under (ABRT's dso_list), the program's own for the executable, else the
// package the local database names (local) at the version the reporter
// recorded for it, else local as it is. A package the reporter recorded
// without a version ("(not installed)") leaves local as it is.
func (rp *reportedPackages) of(module string, local *Package) *Package {
	p := rp.byFile[module]
	if p == nil && rp.program != nil && rp.exe != "" && (module == rp.exe || filepath.Base(module) == filepath.Base(rp.exe)) {
		p = rp.program
	}
	if p == nil && local != nil {
		p = rp.byName[local.Name]
	}
	if p == nil || p.Version == "" {
		return local
	}
	out := fromReport(p)
	if local != nil && local.Name == out.Name {
		out.Source = firstNonEmpty(out.Source, local.Source)
		out.UpstreamName, out.Repository = local.UpstreamName, local.Repository
	}
	out.SourceVersion = firstNonEmpty(out.SourceVersion, out.Version)
	return out
}

// fromReport turns a reporter's package into the inventory's: apport
// reports Debian packages (dpkg versions), ABRT rpm packages
// ([epoch:]version-release).
func fromReport(p *analysis.Package) *Package {
	out := &Package{Manager: "dpkg", Name: p.Name, Version: p.Version, Source: p.Source, RecordedBy: p.Origin}
	if p.Origin == "abrt" {
		out.Manager = "rpm"
		v := p.Version
		if i := strings.IndexByte(v, ':'); i >= 0 {
			v = v[i+1:]
		}
		if i := strings.LastIndexByte(v, '-'); i > 0 {
			v = v[:i]
		}
		out.Upstream = v
		return out
	}
	out.Upstream = pkgdb.DebianUpstream(p.Version)
	return out
}
