package native

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"path/filepath"

	"github.com/faultline-dev/faultline/analysis/debuginfo/debugfile"
)

// locate finds the module's file and debug file and computes its load
// bias. When no file matches, the module keeps what was tried in
// m.notFound; fetchMissing may still find it (debuginfod) before
// reportMissing turns that into one problem.
func (p *Process) locate(m *module) {
	if m.isExe && p.opt.Exe != "" {
		p.locateGivenExe(m)
		return
	}
	p.locateMapped(m)
}

// locateGivenExe uses the executable the user named (--exe) for module m,
// the core's executable, when it is the build that ran: its build-id is
// the one in the core's copy of the executable's headers (or the core does
// not say). Another build is never used: its addresses name the wrong
// functions and lines, and a wrong backtrace stated with evidence is worse
// than `??` frames. gdb warns and uses it anyway; lldb refuses the target
// outright. faultline does neither: it says so (a problem naming both
// build-ids, and a warning on stderr) and goes on without that file, from
// the path the core records, so the libraries, the signal and the kind are
// still right.
func (p *Process) locateGivenExe(m *module) {
	given := p.opt.Exe
	got, err := debugfile.FileBuildID(given)
	if err == nil && (m.buildID == nil || bytes.Equal(got, m.buildID)) {
		p.attachBinary(m, given)
		return
	}
	p.locateMapped(m)
	var why string
	if err != nil {
		why = fmt.Sprintf("--exe %s: %v", given, err)
	} else {
		why = fmt.Sprintf("--exe %s: build-id %s does not match the core's executable %s (build-id %s); "+
			"a different build names the wrong functions, so it is not used", given, hexOrNone(got), m.path, hex.EncodeToString(m.buildID))
	}
	if m.file != "" {
		why += fmt.Sprintf("; the executable's frames come from %s, which matches", m.file)
	} else {
		why += "; the executable's frames stay ?? until its build is given"
	}
	p.problem(m.path, "%s", why)
	if p.opt.Warn != nil {
		p.opt.Warn(why)
	}
}

// locateMapped finds module m's file from the path the core maps it from.
func (p *Process) locateMapped(m *module) {
	file, probs := p.locator.FindBinary(m.path, m.buildID)
	if file == "" {
		m.notFound = probs
		m.bias = m.base
		return
	}
	p.attachBinary(m, file)
}

// exeWithoutNTFile returns the executable to map when the core lists no
// files: --exe, else the path the process was run with (AT_EXECFN, then
// found like any module: as is, under the sysroot, in the search dirs).
func (p *Process) exeWithoutNTFile() string {
	if p.opt.Exe != "" {
		return p.opt.Exe
	}
	fn := p.core.ExecFn()
	if fn == "" && p.core.Process != nil {
		fn = p.core.Process.Fname
	}
	if fn == "" {
		return ""
	}
	file, _ := p.locator.FindBinary(fn, nil)
	if file == "" && !filepath.IsAbs(fn) {
		file, _ = p.locator.FindBinary("/"+filepath.Base(fn), nil)
	}
	return file
}
