package moduleorigin

import (
	"debug/elf"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/faultline-dev/faultline/analysis/regular"
)

// versionClues say where a module file tells its own release.
type versionClues struct {
	// file matches the module's real file name (libz.so.1.2.13); the first
	// group is the release.
	file *regexp.Regexp
	// symbols matches the symbol-version definitions (.gnu.version_d:
	// ZLIB_1.2.12); the highest release of the first groups wins. Libraries
	// define a new version only when they add symbols, so this is the
	// release or an earlier one.
	symbols *regexp.Regexp
	// text matches version strings in the read-only data ("deflate 1.2.13
	// Copyright"); the first group is the release.
	text *regexp.Regexp
}

const (
	// maxScannedRodata caps the read-only data searched for a version string.
	maxScannedRodata = 64 << 20
	// rodataChunk is how much is searched at once; chunks overlap by
	// rodataOverlap so that a string across a boundary is found.
	rodataChunk   = 4 << 20
	rodataOverlap = 512
)

// ReleaseFromFile reads a module's release from its real file name, its
// version strings and its symbol-version definitions, in that order (the
// first two give the release itself, the last a lower bound). It returns
// the release and where it was found, or "" when no clue matched.
func (vc *versionClues) ReleaseFromFile(module, file string) (string, string) {
	if vc == nil {
		return "", ""
	}
	if vc.file != nil {
		for _, p := range []string{file, module} {
			if m := vc.file.FindStringSubmatch(filepath.Base(p)); m != nil {
				return m[1], "file name " + filepath.Base(p)
			}
		}
	}
	if vc.text == nil && vc.symbols == nil {
		return "", ""
	}
	rf, _, err := regular.Open(file) // a module's path comes from the core
	if err != nil {
		return "", ""
	}
	defer rf.Close()
	f, err := elf.NewFile(rf)
	if err != nil {
		return "", ""
	}
	if vc.text != nil {
		if v, s := scanRodata(f, vc.text); v != "" {
			return v, "version string " + strconv.Quote(s)
		}
	}
	if vc.symbols != nil {
		if v, s := highestSymbolVersion(f, vc.symbols); v != "" {
			return v, "symbol version " + s
		}
	}
	return "", ""
}

// scanRodata finds re in the file's .rodata, chunk by chunk, up to
// maxScannedRodata bytes; it returns the first group and the whole match.
func scanRodata(f *elf.File, re *regexp.Regexp) (string, string) {
	s := f.Section(".rodata")
	if s == nil || s.Type == elf.SHT_NOBITS {
		return "", ""
	}
	r := s.Open()
	buf := make([]byte, 0, rodataChunk+rodataOverlap)
	var read int64
	for read < maxScannedRodata {
		n, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		read += int64(n)
		if m := re.FindSubmatch(buf); m != nil {
			return string(m[1]), string(m[0])
		}
		if err != nil {
			break
		}
		keep := min(rodataOverlap, len(buf))
		copy(buf, buf[len(buf)-keep:])
		buf = buf[:keep]
	}
	return "", ""
}

// highestSymbolVersion returns the highest release among the symbol-version
// definitions matching re, and that definition's name.
func highestSymbolVersion(f *elf.File, re *regexp.Regexp) (string, string) {
	defs, err := f.DynamicVersions()
	if err != nil {
		return "", ""
	}
	best, bestName := "", ""
	for _, d := range defs {
		m := re.FindStringSubmatch(d.Name)
		if m == nil {
			continue
		}
		if best == "" || compareReleases(m[1], best) > 0 {
			best, bestName = m[1], d.Name
		}
	}
	return best, bestName
}

// compareReleases compares dotted releases numerically, element by element
// ("1.2.12" > "1.2.9" > "1.2.7.1").
func compareReleases(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}
