package debugfile

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/analysis/regular"
)

// Locator finds the file on disk for a module mapped in a core, and its
// separate debug file, the way gdb does (GDB manual, "Debugging Information
// in Separate Files").
type Locator struct {
	// Sysroot is prepended to absolute paths from the core (gdb's `set sysroot`).
	Sysroot string
	// DebugDirs are searched like gdb's `debug-file-directory`, in addition
	// to /usr/lib/debug.
	DebugDirs []string
	// SearchDirs are extra directories searched by base name for binaries.
	SearchDirs []string
}

// FindBinary returns the file for a module mapped from mappedPath: the path
// as mapped, then Sysroot+path, then the base name in each SearchDir. A
// candidate whose build-id differs from wantID (when wantID is not nil) is
// rejected with a problem naming both ids; it is never used silently.
func (l *Locator) FindBinary(mappedPath string, wantID []byte) (path string, problems []string) {
	var cands []string
	if mappedPath != "" {
		cands = append(cands, mappedPath)
		if l.Sysroot != "" {
			cands = append(cands, filepath.Join(l.Sysroot, mappedPath))
		}
		base := filepath.Base(mappedPath)
		for _, d := range l.SearchDirs {
			cands = append(cands, filepath.Join(d, base))
		}
	}
	// With a sysroot, the sysroot copy is what the user means; try it first.
	if l.Sysroot != "" && len(cands) > 1 {
		cands[0], cands[1] = cands[1], cands[0]
	}
	seen := map[string]bool{}
	for _, c := range cands {
		if seen[c] {
			continue
		}
		seen[c] = true
		if !object.IsRegular(c) {
			continue
		}
		if wantID == nil {
			return c, problems
		}
		got, err := FileBuildID(c)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", c, err))
			continue
		}
		if !bytes.Equal(got, wantID) {
			problems = append(problems, fmt.Sprintf("%s: build-id %s does not match the core's %s; not used",
				c, idString(got), hex.EncodeToString(wantID)))
			continue
		}
		return c, problems
	}
	if len(problems) == 0 {
		problems = append(problems, fmt.Sprintf("%s: file not found (set the sysroot or add a search directory)", mappedPath))
	}
	return "", problems
}

func idString(id []byte) string {
	if id == nil {
		return "(none)"
	}
	return hex.EncodeToString(id)
}

// FileBuildID returns the GNU build-id of the ELF file at p (nil when it has none).
func FileBuildID(p string) ([]byte, error) {
	// Most files say it in a PT_NOTE segment, read with a few small reads
	// (a core names hundreds of libraries: mapping and parsing each whole
	// would cost more than the rest of the analysis).
	if id, ok := object.NoteBuildID(p); ok {
		return id, nil
	}
	o, err := object.OpenObject(p)
	if err != nil {
		return nil, err
	}
	defer o.Close()
	return o.BuildID(), nil
}

// debugDirs is the list of global debug directories: /usr/lib/debug, the
// configured ones, then the sysroot's /usr/lib/debug.
func (l *Locator) debugDirs() []string {
	dirs := []string{object.DefaultDebugDir}
	dirs = append(dirs, l.DebugDirs...)
	if l.Sysroot != "" {
		dirs = append(dirs, filepath.Join(l.Sysroot, object.DefaultDebugDir))
	}
	seen := map[string]bool{}
	out := dirs[:0]
	for _, d := range dirs {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// FindDebug returns the file holding obj's DWARF: obj itself if it has
// .debug_info; else <debugdir>/.build-id/xx/yyyy.debug for each debug dir;
// else the .gnu_debuglink name in the object's directory, its .debug/
// subdirectory, and each debug dir joined with the object's directory. A
// debuglink candidate whose CRC32 differs is reported and not used; a
// build-id candidate whose own build-id differs is reported and not used.
// It returns "" when nothing is found.
func (l *Locator) FindDebug(binaryPath string, obj *object.Object) (debugPath string, problems []string) {
	if obj == nil {
		return "", []string{binaryPath + ": not opened"}
	}
	if _, _, ok := obj.Section(".debug_info"); ok {
		return binaryPath, nil
	}
	id := obj.BuildID()
	if len(id) >= 2 {
		h := hex.EncodeToString(id)
		for _, d := range l.debugDirs() {
			c := filepath.Join(d, ".build-id", h[:2], h[2:]+".debug")
			if !object.IsRegular(c) {
				continue
			}
			got, err := FileBuildID(c)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%v%s", err, symlinkNote(c)))
				continue
			}
			if got != nil && !bytes.Equal(got, id) {
				problems = append(problems, fmt.Sprintf("%s: build-id %s does not match %s; not used", c, idString(got), h))
				continue
			}
			return c, problems
		}
	}
	name, crc, ok := obj.DebugLink()
	if !ok {
		return "", problems
	}
	if !isBaseName(name) {
		// gdb and objcopy --add-gnu-debuglink store a base name; one with a
		// directory could name any file on the machine.
		return "", append(problems, fmt.Sprintf("%s: .gnu_debuglink %q is not a file name; ignored", binaryPath, name))
	}
	dir := filepath.Dir(binaryPath)
	absDir := dir
	if a, err := filepath.Abs(dir); err == nil {
		absDir = a
	}
	cands := []string{filepath.Join(dir, name), filepath.Join(dir, ".debug", name)}
	for _, d := range l.debugDirs() {
		cands = append(cands, filepath.Join(d, absDir, name))
	}
	self, _ := filepath.Abs(binaryPath)
	seen := map[string]bool{}
	for _, c := range cands {
		if seen[c] {
			continue
		}
		seen[c] = true
		if a, _ := filepath.Abs(c); a == self || !object.IsRegular(c) {
			continue
		}
		got, err := fileCRC32(c)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", c, err))
			continue
		}
		if got != crc {
			problems = append(problems, fmt.Sprintf("%s: CRC32 %08x does not match the debuglink's %08x; not used", c, got, crc))
			continue
		}
		return c, problems
	}
	return "", problems
}

// fileCRC32 is the CRC32 (IEEE, as gdb's gnu_debuglink_crc32) of a whole
// regular file. It checks the opened file (not the name, which may have
// changed since) and reads no more than the size it had when opened, so a
// file that grows or never ends (a /proc file reads as regular, size 0)
// costs nothing.
func fileCRC32(p string) (uint32, error) {
	f, st, err := regular.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	h := crc32.NewIEEE()
	if _, err := io.Copy(h, io.LimitReader(f, st.Size())); err != nil {
		return 0, err
	}
	return h.Sum32(), nil
}

// isBaseName reports whether a debuglink names a file in a directory, not a
// path: no separator, not "." or "..", no NUL.
func isBaseName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00")
}

// symlinkNote names where a symlink points (" (a symlink to TARGET)"), or
// is "" for other files: a build-id link to an unrelated file is reported
// by name, never by content.
func symlinkNote(p string) string {
	if t, err := os.Readlink(p); err == nil {
		return fmt.Sprintf(" (a symlink to %s)", t)
	}
	return ""
}
