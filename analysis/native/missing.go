package native

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/faultline-dev/faultline/analysis/debuginfo/symbolize"
	"github.com/faultline-dev/faultline/analysis/model"
)

// reportMissingBinaries turns what locate tried for modules whose file was
// found nowhere into one problem per module.
func (p *Process) reportMissingBinaries() {
	for _, m := range p.modules {
		if m.obj != nil || m.notFound == nil {
			continue
		}
		hint := "copy it from the crashed machine and pass --sysroot or --solib-dir"
		if m.isExe {
			hint = "pass the crashed program with --exe"
		}
		if len(m.buildID) > 0 {
			hint += p.debuginfodHint()
		}
		tried := ""
		if len(m.notFound) > 0 {
			tried = " (" + strings.Join(m.notFound, "; ") + ")"
		}
		p.problem(m.path, "no file matching the core (build-id %s) was found%s: %s", hexOrNone(m.buildID), tried, hint)
	}
}

// reportMissingDebug adds one problem per module that appears in the
// crash's frames without DWARF, saying how to get its debug info.
func (p *Process) reportMissingDebug(c *model.Crash) {
	if d := p.debuginfod; d != nil {
		p.reportDownServers(d)
	}
	used := map[string]bool{}
	for _, th := range c.Threads {
		for _, f := range th.Frames {
			used[f.Module] = true
		}
	}
	for _, m := range p.modules {
		if !used[m.path] || m.obj == nil || m.path == "[vdso]" {
			continue
		}
		s := m.symbols()
		if s != nil && s.HasDWARF() {
			p.reportMissingSupplementary(m, s)
			continue
		}
		if s == nil {
			continue
		}
		if err := s.DWARFError(); err != nil {
			// The debug info is there but cannot be read: installing a debug
			// package would not help; say where it is broken.
			p.problem(m.path, "corrupt debug info: %v; frames show symbol-table names only", err)
			continue
		}
		why := ""
		if m.fetchErr != nil {
			why = fmt.Sprintf(" (debuginfod: %v)", m.fetchErr)
		}
		p.problem(m.path, "no debug info (build-id %s): frames show symbol-table names only, without lines or inlined calls%s; %s",
			hexOrNone(m.buildID), why, p.debugHint(m))
	}
}

// debugHint says how to get a module's debug info.
func (p *Process) debugHint(m *module) string {
	var ways []string
	if pkg := debugPackage(m.path); pkg != "" {
		ways = append(ways, "run `apt-get install "+pkg+"` (Debian/Ubuntu; on another machine than the crashed one, pass its /usr/lib/debug with --debug-dir)")
	} else {
		ways = append(ways, "install the distribution's debug package (Debian: its -dbgsym package from the debian-debug archive; Fedora: `dnf debuginfo-install`)")
	}
	ways = append(ways, "pass --debug-dir DIR holding .build-id/"+buildIDPath(m.buildID)+".debug or the file its .gnu_debuglink names")
	return "to get it, " + strings.Join(ways, ", or ") + p.debuginfodHint()
}

// debuginfodHint is what to say about debuginfod in a hint.
func (p *Process) debuginfodHint() string {
	switch {
	case p.opt.Offline:
		return ", or drop --offline to ask debuginfod"
	case p.opt.debuginfodClient() == nil:
		return ", or set DEBUGINFOD_URLS (e.g. https://debuginfod.debian.net, https://debuginfod.fedoraproject.org)"
	}
	return ""
}

func buildIDPath(id []byte) string {
	h := hexOrNone(id)
	if len(h) < 3 {
		return "xx/yyyy"
	}
	return h[:2] + "/" + h[2:]
}

// debugPackage names the Debian package with the detached debug info of
// the glibc objects, which are packaged apart from the -dbgsym archive.
func debugPackage(path string) string {
	base := filepath.Base(path)
	if strings.Contains(path, "/lib32/") || base == "ld-linux.so.2" {
		return "" // libc6-i386's: libc6-dbg holds the 64-bit objects' only
	}
	for _, p := range []string{"libc.so", "libm.so", "libpthread.so", "libdl.so", "librt.so", "ld-linux", "libresolv.so", "libutil.so"} {
		if strings.HasPrefix(base, p) {
			return "libc6-dbg"
		}
	}
	return ""
}

// reportMissingSupplementary says when a module's frames lack the names its
// DWARF keeps in a dwz supplementary file that was not found: gdb names
// them, so faultline's ?? must not pass for a stripped function.
func (p *Process) reportMissingSupplementary(m *module, s *symbolize.Symbols) {
	err := s.SupplementaryError()
	if err == nil {
		return
	}
	p.problem(m.path, "%v: names and inlined functions kept there show as ??; install the debug package that ships it "+
		"(Debian: the -dbgsym package of the same source, with /usr/lib/debug/.dwz/...), or pass --debug-dir DIR holding it", err)
}
