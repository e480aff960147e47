package gitsrc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/gitsrc/moduleorigin"
	"github.com/faultline-dev/faultline/gitsrc/pkgdb"
)

// Package is the distribution package that installed a module (pkgdb).
type Package = pkgdb.Package

// component is a Component being resolved.
type component struct {
	Component
	// revisions are candidate revisions, tried in order (a registry may
	// know several tag conventions); Revision is the one that resolved.
	revisions []string
	repo      *repository
	files     []treeFile
	index     *suffixIndex
	// wantDirs are the repository directories frames point into (sparse checkouts).
	wantDirs map[string]bool
	failed   bool
	// lineless is set when no frame of the component's modules has a
	// source file: nothing to map, so nothing is fetched.
	lineless bool
	// tracked are the files a working repository (origin git) tracks.
	tracked map[string]bool
	// changelog are the changes of the package's changelog, newest first.
	changelog []Backport
}

// moduleFacts gathers what the inventory sources say about one module.
type moduleFacts struct {
	name, version, repo, origin, rule string
	revisions                         []string
	// branch is the upstream's default branch (registry).
	branch string
	// pkg is the package that installed the module.
	pkg *Package
	// facts are what was found, each with where.
	facts []Fact
	// entry is the registry entry the module matched.
	entry *moduleorigin.RegistryEntry
}

// note records a fact and where it came from.
func (f *moduleFacts) note(field, value, origin string) {
	if value != "" {
		f.facts = append(f.facts, Fact{Field: field, Value: value, Origin: origin})
	}
}

// moduleFile is the file to read a module's ELF notes from.
func moduleFile(m *analysis.Module, sysroot string) string {
	if m.File != "" {
		return m.File
	}
	if sysroot != "" {
		if p := filepath.Join(sysroot, m.Path); fileExists(p) {
			return p
		}
	}
	if fileExists(m.Path) { // the core names it: a FIFO or device there is not read
		return m.Path
	}
	return ""
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// inventoryCtx is what the inventory's sources share for one crash.
type inventoryCtx struct {
	opt      *Options
	owner    *pkgdb.Owners
	reported *reportedPackages
}

// inventory finds the component of every module that frames point into,
// strongest source first: configuration rules, the .note.package note,
// the package database (dpkg, rpm, conda), Python metadata, a .git
// directory near the frames' files, the module file's own version clues
// and the built-in registry (which also fills in what the others leave
// out, such as the repository of a package's upstream). A module nothing
// identifies is a problem.
func inventory(c *analysis.Crash, opt *Options, frameFiles map[string][]string) ([]*component, []Problem) {
	var problems []Problem
	mods := framedModules(c)
	if len(mods) == 0 {
		problems = append(problems, Problem{Message: "no frame of the crash runs in a known module (file): " +
			"there is nothing to identify components from; open the core, or a log that names its modules"})
	}
	paths := make([]string, len(mods))
	for i, m := range mods {
		paths[i] = m.Path
	}
	ic := &inventoryCtx{opt: opt, owner: pkgdb.NewOwners(opt.Sysroot, paths), reported: newReportedPackages(c)}
	byKey := map[string]*component{}
	var out []*component
	for _, m := range mods {
		f, probs := ic.factsOf(m, frameFiles[m.Path])
		problems = append(problems, probs...)
		if f.repo == "" || len(f.revisions) == 0 {
			problems = append(problems, unidentified(m.Path, &f))
			continue
		}
		out = addComponent(byKey, out, f, m.Path, len(frameFiles[m.Path]) == 0)
	}
	for _, comp := range out {
		comp.DebugInfo = debugInfoStep(c, comp)
	}
	loadBackports(out, opt.Sysroot)
	return out, problems
}

// framedModules are the crash's modules that some frame runs in, in the
// crash's module order.
func framedModules(c *analysis.Crash) []*analysis.Module {
	used := map[string]bool{}
	for _, t := range c.Threads {
		for _, f := range t.Frames {
			if f.Module != "" && f.Language == "" {
				used[f.Module] = true
			}
		}
	}
	var mods []*analysis.Module
	for i := range c.Modules {
		if p := c.Modules[i].Path; used[p] && !strings.HasPrefix(p, "[") {
			mods = append(mods, &c.Modules[i])
		}
	}
	return mods
}

// unidentified is the problem for a module the inventory could not turn
// into a repository and revision, saying how far it got.
func unidentified(module string, f *moduleFacts) Problem {
	const add = `: add {"module", "repo", "revision"} to faultline.json's components`
	if f.name == "" && f.origin != "config" {
		return Problem{Module: module, Message: "nothing identifies " + filepath.Base(module) +
			": no .note.package, no package database entry (dpkg, rpm, conda), no Python metadata, " +
			"no git checkout near its sources, and no match in the built-in registry" + add}
	}
	what := strings.TrimSpace(f.name + " " + f.version)
	switch {
	case f.repo != "":
		return Problem{Module: module, Message: "no release of " + what + " is known to look for in " + f.repo + add}
	case f.pkg != nil:
		return Problem{Module: module, Message: "no repository known for " + what + " (" + f.pkg.Manager + " package " +
			f.pkg.Name + ", not in the built-in registry)" + add}
	}
	return Problem{Module: module, Message: "no repository and revision known for " + what + add}
}

// factsOf asks inventory's sources, strongest first, what module m is;
// files are the files its frames name.
func (ic *inventoryCtx) factsOf(m *analysis.Module, files []string) (moduleFacts, []Problem) {
	opt := ic.opt
	var problems []Problem
	f := moduleFacts{}
	f.pkg = ic.reported.of(m.Path, ic.owner.Of(m.Path))
	if r := opt.Config.rule(m.Path); r != nil {
		f.fromRule(r, m.Path, opt.NoRegistry)
		return f, nil
	}
	if err := f.fromPackageNote(moduleFile(m, opt.Sysroot)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		problems = append(problems, Problem{Module: m.Path, Message: "reading .note.package: " + err.Error()})
	}
	if f.repo == "" && f.name == "" && f.pkg != nil {
		f.fromPackage()
	}
	if f.repo == "" && f.name == "" {
		f.fromPython(opt.Sysroot, m.Path)
	}
	if f.repo == "" {
		if dir, head, ok := gitHeadNear(files); ok {
			f.repo, f.revisions, f.origin = dir, []string{head}, "git"
			f.name = firstNonEmpty(f.name, filepath.Base(dir))
			f.note("repository", dir, "git checkout holding the frames' sources")
			f.note("revision", head, "HEAD of "+dir)
		}
	}
	if !opt.NoRegistry && (f.repo == "" || len(f.revisions) == 0) {
		f.fromRegistry(m, opt.Sysroot)
	}
	if f.repo == "" && f.pkg != nil {
		f.fromPackageUpstream()
	}
	return f, problems
}

// fromRule takes the component from a configuration rule. A revision that
// is a bare release ("1.2.12") is tried as written and then through the
// tag conventions of the registry entry the module matches (or v1.2.12,
// NAME-1.2.12).
func (f *moduleFacts) fromRule(r *ComponentRule, module string, noRegistry bool) {
	f.name, f.repo, f.origin, f.rule = r.Name, r.Repo, "config", r.Module
	f.revisions = []string{r.Revision}
	f.note("repository", r.Repo, "config rule "+r.Module)
	f.note("revision", r.Revision, "config rule "+r.Module)
	if !moduleorigin.LooksLikeRelease(r.Revision) {
		return
	}
	f.version = r.Revision
	tags := moduleorigin.GenericTags(firstNonEmpty(r.Name, strings.TrimSuffix(filepath.Base(r.Repo), ".git")))
	if !noRegistry {
		if e := moduleorigin.RegistryFor(module, r.Name); e != nil {
			f.branch = e.Branch
			for _, t := range e.Revisions(r.Revision) {
				f.revisions = appendUnique(f.revisions, t)
			}
		}
	}
	for _, t := range tags(r.Revision) {
		f.revisions = appendUnique(f.revisions, t)
	}
}

// fromPackageNote takes name, version, repository and revisions from the
// module's .note.package (systemd's package metadata note).
func (f *moduleFacts) fromPackageNote(file string) error {
	n, err := moduleorigin.ReadPackageNote(file)
	if err != nil || n == nil {
		return err
	}
	f.name, f.version, f.origin = n.Name, n.Version, "package-note"
	f.repo = n.Repository
	if n.Commit != "" {
		f.revisions = []string{n.Commit}
	} else if n.Version != "" {
		f.revisions = []string{n.Version, "v" + n.Version}
	}
	for _, kv := range [][2]string{{"name", n.Name}, {"version", n.Version}, {"repository", n.Repository}, {"revision", n.Commit}} {
		f.note(kv[0], kv[1], ".note.package")
	}
	return nil
}

// fromPackage takes the name and upstream version from the package that
// installed the module.
func (f *moduleFacts) fromPackage() {
	p := f.pkg
	f.name, f.version, f.origin = firstNonEmpty(p.Source, p.Name), p.Upstream, p.Manager
	where := p.Manager + " " + p.Name + " " + p.Version
	if p.RecordedBy != "" {
		f.note("package", p.Name+" "+p.Version, p.RecordedBy+" report (the version installed at the crash)")
	} else {
		f.note("package", p.Name+" "+p.Version, p.Manager+" database")
	}
	if p.Source != "" && p.Source != p.Name {
		f.note("source package", p.Source+" "+p.SourceVersion, where)
	}
	f.note("upstream version", p.Upstream, where)
}

// fromPython takes what the metadata of the Python distribution a module
// under site-packages belongs to says.
func (f *moduleFacts) fromPython(sysroot, module string) {
	site, pkg, ok := moduleorigin.SitePackage(module)
	if !ok {
		return
	}
	pf := moduleorigin.ReadPython(filepath.Join(sysroot, site), pkg)
	if pf.Dist == "" {
		return
	}
	f.name, f.version, f.origin = firstNonEmpty(f.name, pf.Dist), firstNonEmpty(f.version, pf.Version), firstNonEmpty(f.origin, "python")
	f.repo = pf.Repo
	if pf.Commit != "" {
		f.revisions = []string{pf.Commit}
	}
	f.note("python distribution", pf.Dist+" "+pf.Version, "Python metadata in "+site)
	f.note("repository", pf.Repo, "direct_url.json")
	f.note("revision", pf.Commit, "Python metadata in "+site)
}

// fromRegistry fills in the repository, revisions and default branch the
// built-in registry knows for the module; a module known by no other
// source gets its release from the file itself (file name, version
// strings, symbol versions).
func (f *moduleFacts) fromRegistry(m *analysis.Module, sysroot string) {
	names := []string{f.name}
	if f.pkg != nil {
		names = append(names, f.pkg.Source, f.pkg.Name, f.pkg.UpstreamName)
	}
	e := moduleorigin.RegistryFor(m.Path, names...)
	if e == nil {
		return
	}
	f.entry = e
	ver := firstNonEmpty(f.version, moduleorigin.RocmPathVersion(m.Path), moduleorigin.RocmInstallVersion(sysroot, m.Path))
	if ver == "" {
		v, where := e.Version.ReleaseFromFile(m.Path, moduleFile(m, sysroot))
		f.note("version", v, where)
		ver = v
	}
	if f.repo == "" && e.Repo != nil {
		f.repo = e.Repo(ver)
		f.note("repository", f.repo, "built-in registry ("+e.Name+")")
	}
	if len(f.revisions) == 0 && e.Revisions != nil && ver != "" {
		f.revisions = e.Revisions(ver)
		f.note("revision", strings.Join(f.revisions, " or "), "tag convention of "+e.Name+" for "+ver)
	}
	f.branch = e.Branch
	f.name = e.Name
	f.version = ver
	if f.origin == "" {
		f.origin = "registry"
	} else {
		f.origin += "+registry"
	}
}

// fromPackageUpstream uses the repository a package's copyright file names
// as its source, with the common tag conventions.
func (f *moduleFacts) fromPackageUpstream() {
	url := f.pkg.Repository
	if url == "" || f.pkg.Upstream == "" {
		return
	}
	f.repo = url
	f.revisions = moduleorigin.GenericTags(f.pkg.UpstreamName)(f.pkg.Upstream)
	if fullHashRE.MatchString(f.pkg.Upstream) || !moduleorigin.LooksLikeRelease(f.pkg.Upstream) && hexRE.MatchString(f.pkg.Upstream) {
		f.revisions = []string{f.pkg.Upstream}
	}
	f.name = firstNonEmpty(f.pkg.UpstreamName, f.name)
	f.origin += "+copyright"
	f.note("repository", url, "/usr/share/doc/"+f.pkg.Name+"/copyright Source")
	f.note("revision", strings.Join(f.revisions, " or "), "common tag conventions for "+f.pkg.Upstream)
}

// addComponent adds module to the component of its repository and
// revisions, creating it on first use. lineless says the module's frames
// name no source file.
func addComponent(byKey map[string]*component, out []*component, f moduleFacts, module string, lineless bool) []*component {
	key := f.repo + "\x00" + strings.Join(f.revisions, ",")
	comp := byKey[key]
	if comp == nil {
		rule := f.rule
		if rule == "" {
			rule = moduleorigin.ModuleRE(module)
		}
		name := firstNonEmpty(f.name, strings.TrimSuffix(filepath.Base(f.repo), ".git"))
		comp = &component{
			Component: Component{Name: name, Module: rule, Repo: f.repo, Revision: f.revisions[0], Version: f.version,
				Origin: f.origin, Branch: f.branch, Package: f.pkg, Facts: f.facts},
			revisions: f.revisions,
			wantDirs:  map[string]bool{},
			lineless:  true,
		}
		byKey[key] = comp
		out = append(out, comp)
	} else if f.rule == "" && !strings.Contains(comp.Module, module) {
		comp.Module += "|" + moduleorigin.ModuleRE(module)
	}
	comp.lineless = comp.lineless && lineless
	comp.Modules = append(comp.Modules, module)
	return out
}

// debugInfoStep says how to get line information for the component's
// frames that have none (the step that would map them onto its source).
func debugInfoStep(c *analysis.Crash, comp *component) string {
	in := map[string]bool{}
	for _, m := range comp.Modules {
		in[m] = true
	}
	n := 0
	for _, t := range c.Threads {
		for _, f := range t.Frames {
			if in[f.Module] && f.File == "" && f.Language == "" && !f.Signal {
				n++
			}
		}
	}
	if n == 0 {
		return ""
	}
	step := "build it with -g, or pass --debug-dir with its debug files"
	if p := comp.Package; p != nil {
		switch p.Manager {
		case "dpkg":
			step = "install " + debianDebugPackage(p) + " (from the debian-debug archive), or let faultline fetch the debug files " +
				"by build-id from Debian's debuginfod (DEBUGINFOD_URLS=https://debuginfod.debian.net, without --offline)"
		case "rpm":
			step = "run `dnf debuginfo-install " + p.Name + "`, or set DEBUGINFOD_URLS to the distribution's debuginfod"
		case "conda":
			step = "install a debug build of " + p.Name + ", or pass --debug-dir with its debug files"
		}
	}
	frames := "frames"
	if n == 1 {
		frames = "frame"
	}
	return fmt.Sprintf("%d %s without line info: to map them, %s", n, frames, step)
}

// debianDebugPackage names the package with a Debian package's debug
// files: libc6-dbg for glibc and pythonX.Y-dbg for CPython (both ship
// detached debug files for the regular build), PKG-dbgsym otherwise.
func debianDebugPackage(p *Package) string {
	switch {
	case p.Source == "glibc":
		return "libc6-dbg"
	case strings.HasPrefix(p.Source, "python3.") && !strings.Contains(p.Source, "-"):
		return p.Source + "-dbg"
	}
	return p.Name + "-dbgsym"
}

// gitHeadNear looks for a git working repository containing one of the
// given source files (absolute DWARF paths: the compilation directory
// joined with the file name) that the repository tracks, and returns its
// directory and HEAD commit.
func gitHeadNear(files []string) (string, string, bool) {
	seen := map[string]bool{}
	for _, f := range files {
		if !filepath.IsAbs(f) {
			continue
		}
		dir := filepath.Dir(filepath.Clean(f))
		for range 12 {
			if seen[dir] {
				break
			}
			seen[dir] = true
			if _, _, ok := workingGitDir(dir); ok {
				if head, ok := trackedHead(dir, files); ok {
					return dir, head, true
				}
				break
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", "", false
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
