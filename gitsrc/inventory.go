package gitsrc

import (
	"os"
	"path/filepath"
	"strings"

	git "github.com/go-git/go-git/v5"

	"github.com/faultline-dev/faultline/analysis"
)

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
}

// moduleFacts gathers what the inventory sources say about one module.
type moduleFacts struct {
	name, version, repo, origin, rule string
	revisions                         []string
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
	return m.Path
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// inventory finds the component of every module that frames point into,
// strongest source first: configuration rules, the .note.package note,
// Python metadata, dpkg, a .git directory near the frames' files, the
// built-in registry (which also fills in what weaker sources leave out,
// such as the repository of a name and version from dpkg).
func inventory(c *analysis.Crash, opt *Options, frameFiles map[string][]string) ([]*component, []Problem) {
	var problems []Problem
	var mods []*analysis.Module
	var dpkgPaths []string
	for i := range c.Modules {
		if _, ok := frameFiles[c.Modules[i].Path]; ok {
			mods = append(mods, &c.Modules[i])
			dpkgPaths = append(dpkgPaths, c.Modules[i].Path)
		}
	}
	var dpkg map[string][2]string // filled lazily: reading every .list costs
	dpkgOwner := func(path string) ([2]string, bool) {
		if dpkg == nil {
			dpkg = dpkgOwners(opt.Sysroot, dpkgPaths)
		}
		pv, ok := dpkg[path]
		return pv, ok
	}
	byKey := map[string]*component{}
	var out []*component
	for _, m := range mods {
		f, probs := factsOf(m, opt, frameFiles[m.Path], dpkgOwner)
		problems = append(problems, probs...)
		if f.repo == "" || len(f.revisions) == 0 {
			if f.name != "" || f.origin == "config" {
				problems = append(problems, Problem{Module: m.Path, Message: "no repository and revision known for " +
					strings.TrimSpace(f.name+" "+f.version) + `: add {"module", "repo", "revision"} to faultline.json's components`})
			}
			continue
		}
		out = addComponent(byKey, out, f, m.Path)
	}
	return out, problems
}

// factsOf asks inventory's sources, strongest first, what module m is;
// files are the files its frames name.
func factsOf(m *analysis.Module, opt *Options, files []string, dpkgOwner func(string) ([2]string, bool)) (moduleFacts, []Problem) {
	var problems []Problem
	f := moduleFacts{}
	if r := opt.Config.rule(m.Path); r != nil {
		f = moduleFacts{name: r.Name, repo: r.Repo, revisions: []string{r.Revision}, origin: "config", rule: r.Module}
	}
	if f.repo == "" {
		if err := f.fromPackageNote(moduleFile(m, opt.Sysroot)); err != nil {
			problems = append(problems, Problem{Module: m.Path, Message: "reading .note.package: " + err.Error()})
		}
	}
	if f.repo == "" {
		f.fromPython(opt.Sysroot, m.Path)
	}
	if f.repo == "" && f.name == "" {
		if pv, ok := dpkgOwner(m.Path); ok {
			f.name, f.version, f.origin = pv[0], pv[1], "dpkg"
		}
	}
	if f.repo == "" {
		if dir, head, ok := gitHeadNear(files); ok {
			f.repo, f.revisions, f.origin = dir, []string{head}, "git"
			f.name = firstNonEmpty(f.name, filepath.Base(dir))
		}
	}
	if !opt.NoRegistry && (f.repo == "" || len(f.revisions) == 0) {
		f.fromRegistry(m.Path, opt.Sysroot)
	}
	return f, problems
}

// fromPackageNote takes name, version, repository and revisions from the
// module's .note.package (systemd's package metadata note).
func (f *moduleFacts) fromPackageNote(file string) error {
	n, err := ReadPackageNote(file)
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
	return nil
}

// fromPython takes what the metadata of the Python distribution a module
// under site-packages belongs to says.
func (f *moduleFacts) fromPython(sysroot, module string) {
	site, pkg, ok := sitePackage(module)
	if !ok {
		return
	}
	pf := readPython(filepath.Join(sysroot, site), pkg)
	if pf.dist == "" {
		return
	}
	f.name, f.version, f.origin = firstNonEmpty(f.name, pf.dist), firstNonEmpty(f.version, pf.version), firstNonEmpty(f.origin, "python")
	f.repo = pf.repo
	if pf.commit != "" {
		f.revisions = []string{pf.commit}
	}
}

// fromRegistry fills in the repository and revisions the built-in registry
// knows for the module's name and version.
func (f *moduleFacts) fromRegistry(module, sysroot string) {
	e := registryFor(f.name, module)
	if e == nil {
		return
	}
	ver := firstNonEmpty(f.version, rocmPathVersion(module), rocmInstallVersion(sysroot, module))
	if f.repo == "" && e.repo != nil {
		f.repo = e.repo(ver)
	}
	if len(f.revisions) == 0 && e.revisions != nil && ver != "" {
		f.revisions = e.revisions(ver)
	}
	f.name = firstNonEmpty(f.name, e.name)
	f.version = ver
	if f.origin == "" {
		f.origin = "registry"
	} else {
		f.origin += "+registry"
	}
}

// addComponent adds module to the component of its repository and
// revisions, creating it on first use.
func addComponent(byKey map[string]*component, out []*component, f moduleFacts, module string) []*component {
	key := f.repo + "\x00" + strings.Join(f.revisions, ",")
	comp := byKey[key]
	if comp == nil {
		rule := f.rule
		if rule == "" {
			rule = moduleRE(module)
		}
		name := firstNonEmpty(f.name, strings.TrimSuffix(filepath.Base(f.repo), ".git"))
		comp = &component{
			Component: Component{Name: name, Module: rule, Repo: f.repo, Revision: f.revisions[0], Version: f.version, Origin: f.origin},
			revisions: f.revisions,
			wantDirs:  map[string]bool{},
		}
		byKey[key] = comp
		out = append(out, comp)
	} else if f.rule == "" && !strings.Contains(comp.Module, module) {
		comp.Module += "|" + moduleRE(module)
	}
	comp.Modules = append(comp.Modules, module)
	return out
}

// gitHeadNear looks for a git working repository containing one of the
// given source files (absolute DWARF paths: the compilation directory
// joined with the file name) and returns its directory and HEAD commit.
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
			if st, err := os.Stat(filepath.Join(dir, ".git")); err == nil && st.IsDir() {
				r, err := git.PlainOpen(dir)
				if err != nil {
					break
				}
				head, err := r.Head()
				if err != nil {
					break
				}
				return dir, head.Hash().String(), true
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
