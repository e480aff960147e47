package classify

import (
	"fmt"
	"path"
	"strings"

	"github.com/faultline-dev/faultline/analysis/model"
)

// A fault inside a library the program only uses (zlib's inflate under
// uncompress(), HDF5, protobuf, BLAS, libtorch, CPython's PyObject_*
// called without the GIL) is the program's doing as often as not: it
// passed the bad pointer or broke the library's rule. As libc's frames
// are skipped, so are those of every library the system or a package
// manager installed; the culprit is the program's frame that called in,
// and the summary says which library the fault is inside.

// systemPrefixes are where the system and package managers install
// programs and libraries.
var systemPrefixes = []string{"/lib/", "/lib64/", "/lib32/", "/usr/lib/", "/usr/lib64/", "/usr/lib32/", "/usr/libexec/",
	"/usr/bin/", "/usr/sbin/", "/bin/", "/sbin/", "/usr/share/", "/snap/", "/nix/store/", "/gnu/store/"}

// foreign reports whether frame f runs code of a library or program that
// is not the program's own: installed by the system or a package manager
// (pip's site-packages, conda's pkgs).
func foreign(f model.Frame) bool {
	m := f.Module
	if m == "" || m == "[vdso]" {
		return false
	}
	for _, p := range systemPrefixes {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return strings.Contains(m, "/site-packages/") || strings.Contains(m, "/dist-packages/") || strings.Contains(m, "/pkgs/")
}

// foreignCrash is the frame inside a foreign library where the crash is,
// when the culprit is the program's frame that called into it; -1 when the
// crash is in the program's own code.
func (a *analyzer) foreignCrash() int {
	cu := a.cls.CulpritFrame
	for i := a.start; i < cu && i < len(a.frames); i++ {
		f := a.frames[i]
		if foreign(f) && !isRuntime(f) && f.Function != "" {
			return i
		}
	}
	return -1
}

// foreignNote is " (inside libz.so.1: inflate)" when the
// crash is in a foreign library the culprit called, "" otherwise.
func (a *analyzer) foreignNote() string {
	i := a.foreignCrash()
	if i < 0 || a.noForeignNote {
		return ""
	}
	f := a.frames[i]
	return fmt.Sprintf(" (inside %s: %s)", path.Base(f.Module), baseName(f.Function))
}

// foreignEvidence records where in the foreign library the crash is.
func (a *analyzer) foreignEvidence() {
	i := a.foreignCrash()
	if i < 0 {
		return
	}
	f := a.frames[i]
	a.evidence("frame #%d, %s, is in %s, a library the program did not build (installed by the system or a package manager): "+
		"the culprit is the program's frame that called into it, which passed what the library faulted on or broke its rules",
		i, baseName(f.Function), f.Module)
}
