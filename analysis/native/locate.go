package native

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"path/filepath"

	"github.com/faultline-dev/faultline/analysis/debuginfo/debugfile"
)

// Step 2 of loading (modules.go): where a module's files are looked for.
// This is the one place the order of the sources is written; the first
// source with a file whose build-id is the core's wins, and a file of
// another build is reported and never used.
//
// The binary:
//  1. the executable named with --exe, for the core's executable only
//     (locateGivenExe);
//  2. the path the core maps it from: under --sysroot when one is set, as
//     mapped, then by base name in each --solib-dir and in --exe's
//     directory (locateMapped: debugfile.Locator.FindBinary); without
//     NT_FILE, the executable is --exe, else the path it was run with
//     (exeWithoutNTFile);
//  3. debuginfod by build-id, for every module still missing at once
//     (fetchMissing).
//
// The debug file:
//  1. the binary itself, when it has .debug_info;
//  2. .build-id/xx/rest.debug in /usr/lib/debug, each --debug-dir and the
//     sysroot's /usr/lib/debug;
//  3. the file .gnu_debuglink names (its CRC checked): beside the binary,
//     in its .debug/ directory, and under each debug directory (1-3:
//     findDebug, through debugfile.Locator.FindDebug);
//  4. debuginfod by build-id: the executable's with the missing binaries, a
//     library's when a stack first reaches it (fetchMissing, fetchDebug).

// locate finds module m's binary (sources 1 and 2 above) and attaches it,
// which finds its debug file. When no file matches, the module keeps what
// was tried in m.notFound; fetchMissing may still find it (debuginfod)
// before reportMissingBinaries turns that into one problem.
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
