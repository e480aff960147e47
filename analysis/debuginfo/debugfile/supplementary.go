package debugfile

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

// FindSupplementary returns the supplementary file (a dwz multifile) that
// the debug file at debugPath names with .gnu_debugaltlink or .debug_sup,
// as gdb's dwarf2_get_dwz_file looks for it: the name as given (absolute,
// under the sysroot first when one is set; relative, from the debug file's
// directory), then by build-id as .build-id/xx/rest.debug in each debug
// directory, then, for Debian's layout (/usr/lib/debug/.dwz/TRIPLET/PKG.debug),
// the same path under each --debug-dir. A candidate whose build-id is not
// wantID is reported and not used. It returns "" and what was tried when
// no file matches. The id is the multifile's build-id (.gnu_debugaltlink)
// or the checksum its .debug_sup gives (DWARF 5).
func (l *Locator) FindSupplementary(debugPath, name string, wantID []byte) (path string, problems []string) {
	seen := map[string]bool{}
	var tried []string
	for _, c := range l.supplementaryCandidates(debugPath, name, wantID) {
		if seen[c] {
			continue
		}
		seen[c] = true
		tried = append(tried, c)
		if !object.IsRegular(c) {
			continue
		}
		got, err := supplementaryID(c)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v%s", c, err, symlinkNote(c)))
			continue
		}
		if len(wantID) > 0 && !bytes.Equal(got, wantID) {
			problems = append(problems, fmt.Sprintf("%s: its id %s is not the %s the debug file names; not used", c, idString(got), hex.EncodeToString(wantID)))
			continue
		}
		return c, problems
	}
	return "", append(problems, "tried "+strings.Join(tried, ", "))
}

// supplementaryID is the id of the file at p as a supplementary file
// (object.SupplementaryID).
func supplementaryID(p string) ([]byte, error) {
	o, err := object.OpenObject(p)
	if err != nil {
		return nil, err
	}
	defer o.Close()
	return o.SupplementaryID(), nil
}

// supplementaryCandidates lists where the supplementary file may be, in
// FindSupplementary's order.
func (l *Locator) supplementaryCandidates(debugPath, name string, wantID []byte) []string {
	var cands []string
	if filepath.IsAbs(name) {
		if l.Sysroot != "" {
			cands = append(cands, filepath.Join(l.Sysroot, name))
		}
		cands = append(cands, filepath.Clean(name))
	} else if name != "" {
		cands = append(cands, filepath.Join(filepath.Dir(debugPath), name))
	}
	if len(wantID) >= 2 {
		h := hex.EncodeToString(wantID)
		for _, d := range l.debugDirs() {
			cands = append(cands, filepath.Join(d, ".build-id", h[:2], h[2:]+".debug"))
		}
	}
	if rest, ok := strings.CutPrefix(filepath.Clean(name), object.DefaultDebugDir+"/"); ok {
		for _, d := range l.DebugDirs {
			cands = append(cands, filepath.Join(d, rest))
		}
	}
	return cands
}
