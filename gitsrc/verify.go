package gitsrc

import (
	"crypto/md5"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/gitsrc/gitdiff"
	"github.com/faultline-dev/faultline/gitsrc/linemd5"
	"github.com/faultline-dev/faultline/gitsrc/srcfunc"
)

// Verification says whether a component's checkout holds the source its
// modules were compiled from, as far as the binary can tell.
type Verification struct {
	// Verified is set when every frame file of the component's modules is
	// in the checkout, every frame line is inside its file, and every file
	// the DWARF 5 line tables give an MD5 for has that MD5.
	Verified bool `json:"verified"`
	// Files counts the distinct frame files checked, MD5 those of them
	// compared by digest; Functions counts the frames' functions whose
	// declaration line in the binary (DW_AT_decl_line) was found declaring
	// them in the checkout.
	Files     int `json:"files"`
	MD5       int `json:"md5,omitempty"`
	Functions int `json:"functions,omitempty"`
	// Mismatches say what differs (wrong tag, local patches).
	Mismatches []string `json:"mismatches,omitempty"`
}

// Unverified reports whether a component's checkout was checked against
// the binary and found to differ: reviews of it must say so.
func (c *Component) Unverified() bool {
	return c.Verification != nil && !c.Verification.Verified
}

// systemHeaderDirs hold files that belong to the toolchain or the system,
// not to the component whose frames inline them.
var systemHeaderDirs = []string{"/usr/include/", "/usr/local/include/", "/usr/lib/gcc/", "/usr/lib/llvm-"}

// verifyComponents checks every fetched component's checkout against the
// binary (verifyComponent) and adds a problem per component that differs.
func verifyComponents(c *analysis.Crash, comps []*component, frames []FrameSource, sysroot string) []Problem {
	mapped := map[[2]int]FrameSource{}
	for _, fs := range frames {
		mapped[[2]int{fs.Thread, fs.Index}] = fs
	}
	var problems []Problem
	for _, comp := range comps {
		if comp.failed || comp.lineless || comp.repo == nil {
			continue
		}
		v := verifyComponent(c, comp, mapped, sysroot)
		comp.Verification = v
		if !v.Verified {
			problems = append(problems, Problem{Module: strings.Join(comp.Modules, ", "), Message: fmt.Sprintf(
				"the checkout of %s %s does not match the binary (a wrong tag, or local patches?): %s; its upstream review is unverified",
				comp.Name, comp.Revision, strings.Join(v.Mismatches, "; "))})
		}
	}
	return problems
}

// maxDeclChecks bounds the functions whose declaration is looked up in
// the binary for one component (each reads the module's DWARF again).
const maxDeclChecks = 32

// verifier checks one component's frames, each file once.
type verifier struct {
	crash   *analysis.Crash
	decls   map[string]bool
	comp    *component
	blobs   map[string]*treeFile
	digests map[string]map[string][16]byte // module → compiled path → MD5
	sysroot string
	modules map[string]*analysis.Module
	seen    map[string]bool
	v       *Verification
}

// verifyComponent checks the component's frames against its checkout.
func verifyComponent(c *analysis.Crash, comp *component, mapped map[[2]int]FrameSource, sysroot string) *Verification {
	vf := &verifier{crash: c, decls: map[string]bool{}, comp: comp, blobs: map[string]*treeFile{}, digests: map[string]map[string][16]byte{},
		sysroot: sysroot, modules: map[string]*analysis.Module{}, seen: map[string]bool{}, v: &Verification{}}
	for i := range comp.files {
		vf.blobs[comp.files[i].path] = &comp.files[i]
	}
	for _, m := range comp.Modules {
		vf.modules[m] = nil
	}
	for i := range c.Modules {
		if _, ok := vf.modules[c.Modules[i].Path]; ok {
			vf.modules[c.Modules[i].Path] = &c.Modules[i]
		}
	}
	for _, t := range c.Threads {
		for _, f := range t.Frames {
			if _, ok := vf.modules[f.Module]; !ok || f.File == "" || f.Language != "" || systemHeader(frameSourcePath(&f)) {
				continue
			}
			fs, ok := mapped[[2]int{t.ID, f.Index}]
			if ok && fs.Component != "" && fs.Component != comp.Name {
				continue // another component's file
			}
			vf.frame(t.ID, f, fs, ok && fs.Component == comp.Name)
		}
	}
	vf.v.Verified = len(vf.v.Mismatches) == 0
	return vf.v
}

func systemHeader(p string) bool {
	for _, d := range systemHeaderDirs {
		if strings.HasPrefix(p, d) {
			return true
		}
	}
	return false
}

// frame checks one frame: its file is in the checkout, its line inside
// the file, and the file's MD5 (where the line table gives one) matches.
func (vf *verifier) frame(tid int, f analysis.Frame, fs FrameSource, mapped bool) {
	where := fmt.Sprintf("frame #%d %s", f.Index, f.Function)
	key := f.Module + "\x00" + f.File
	first := !vf.seen[key]
	vf.seen[key] = true
	if first {
		vf.v.Files++
	}
	if !mapped {
		if first {
			vf.mismatch("%s (%s) is not in %s", f.File, where, vf.comp.Revision)
		}
		return
	}
	tf := vf.blobs[fs.Path]
	if tf == nil {
		return
	}
	content, err := readBlob(vf.comp.repo, tf.hash)
	if err != nil {
		return
	}
	lines := gitdiff.SplitLines(content)
	if n := len(lines); f.Line > n {
		vf.mismatch("%s:%d (%s) is past the end of %s at %s (%d lines)", fs.Path, f.Line, where, fs.Path, vf.comp.Revision, n)
	}
	vf.declaration(tid, f, fs, lines)
	if !first {
		return
	}
	if want, ok := vf.digest(f); ok {
		vf.v.MD5++
		if got := md5.Sum([]byte(content)); got != want {
			vf.mismatch("%s at %s has MD5 %x, the binary was compiled from %x", fs.Path, vf.comp.Revision, got, want)
		}
	}
}

// declaration checks that the line the binary says the frame's function
// is declared on (DW_AT_decl_line, analysis.FunctionExtent) declares it in
// the checkout: the line names the function. A checkout of another
// release, or with local patches above the function, has other text there.
// Where the function's name is nowhere else in the file either (a function
// a macro defines), nothing is claimed.
func (vf *verifier) declaration(tid int, f analysis.Frame, fs FrameSource, lines []string) {
	name := srcfunc.ShortName(f.Function)
	key := f.Module + "\x00" + f.File + "\x00" + f.Function
	if name == "" || vf.decls[key] || len(vf.decls) >= maxDeclChecks {
		return
	}
	vf.decls[key] = true
	ext, ok := analysis.FunctionExtent(vf.crash, tid, f.Index)
	if !ok || ext.DeclLine <= 0 || filepath.Base(ext.File) != filepath.Base(f.File) {
		return
	}
	if ext.DeclLine <= len(lines) && containsWord(lines[ext.DeclLine-1], name) {
		vf.v.Functions++
		return
	}
	for _, l := range lines {
		if containsWord(l, name) {
			vf.mismatch("%s() is declared at line %d of %s in the binary, but that line of %s at %s does not declare it",
				name, ext.DeclLine, filepath.Base(f.File), fs.Path, vf.comp.Revision)
			return
		}
	}
}

// containsWord reports whether line holds name as a whole identifier.
func containsWord(line, name string) bool {
	ident := func(c byte) bool {
		return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	for i := 0; ; {
		j := strings.Index(line[i:], name)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(name)
		if (j == 0 || !ident(line[j-1])) && (end == len(line) || !ident(line[end])) {
			return true
		}
		i = j + 1
	}
}

func (vf *verifier) mismatch(format string, args ...any) {
	if len(vf.v.Mismatches) < 20 {
		vf.v.Mismatches = append(vf.v.Mismatches, fmt.Sprintf(format, args...))
	}
}

// digest is the MD5 the module's line tables give for the frame's file.
func (vf *verifier) digest(f analysis.Frame) ([16]byte, bool) {
	d, ok := vf.digests[f.Module]
	if !ok {
		d = map[string][16]byte{}
		if m := vf.modules[f.Module]; m != nil {
			file := m.DebugFile
			if file == "" {
				file = moduleFile(m, vf.sysroot)
			}
			files, _ := linemd5.ReadELF(file) // what was read before an error still counts
			for _, lf := range files {
				d[filepath.Clean(lf.Path)] = lf.MD5
			}
		}
		vf.digests[f.Module] = d
	}
	sum, ok := d[filepath.Clean(frameSourcePath(&f))]
	return sum, ok
}

// markUnverified flags the reviews of components whose checkout did not
// match the binary.
func markUnverified(res *Result) {
	unverified := map[string]bool{}
	for i := range res.Components {
		if res.Components[i].Unverified() {
			unverified[res.Components[i].Name] = true
		}
	}
	for i := range res.Upstream {
		res.Upstream[i].Unverified = unverified[res.Upstream[i].Component]
	}
}
