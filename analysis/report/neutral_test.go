package report_test

import (
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/faultline-dev/faultline/analysis"
)

// The corpus is regenerated on a machine whose libc, libstdc++ or loader
// differ from the ones the checked-in cores map (.ci/corpora.sh), for
// instance after one of bookworm's security updates. A golden report of
// the old core cannot equal the new core's byte for byte: the pids,
// addresses, registers and build-ids differ, and so may libc's own frames
// (their lines, their inlining) and the libc instruction an abort stops
// on. machineNeutral keeps what the report says about the program built
// from testdata/native and masks the rest, so the goldens still test every
// section on such a machine rather than being skipped.

var (
	hexAddr    = regexp.MustCompile(`0x[0-9a-f]{4,}`)
	buildID12  = regexp.MustCompile(`\| [0-9a-f]{12} \|`)
	frameIndex = regexp.MustCompile(`^\| (\*\*)?#\d+(\*\*)? \|`)
	registers  = regexp.MustCompile(`^[a-z][a-z0-9_]* +0x`)
	corpusDir  = regexp.MustCompile(`\S*/testdata/native/`)
	number     = regexp.MustCompile(`(^|[^:#\w.])\d{2,}\b`)
)

// machineNeutral rewrites the markdown report md of crash c so that two
// runs of the same program on machines with different system libraries
// give the same text.
func machineNeutral(md string, c *analysis.Crash) string {
	system := map[string]bool{}   // base names of system modules
	sysFuncs := map[string]bool{} // functions of frames inside them
	for _, m := range c.Modules {
		if isSystemPath(m.Path) {
			system[filepath.Base(m.Path)] = true
		}
	}
	crashInSystem := false
	ownFuncs := map[string]bool{} // functions of frames outside them
	for _, th := range c.Threads {
		for i, f := range th.Frames {
			if !isSystemPath(f.Module) {
				ownFuncs[f.Function] = true
			}
			if isSystemPath(f.Module) {
				sysFuncs[f.Function] = true
				if th.Crashed && i == 0 {
					crashInSystem = true
				}
			}
		}
	}
	var out []string
	// The rows of the table of thread groups, sorted when it ends: groups
	// of equal size come in no fixed order.
	var groups []string
	inCode, inInsn, inGroups := false, false, false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "### ") {
			inInsn = l == "### Crashing instruction"
		}
		if strings.HasPrefix(l, "```") {
			inCode = !inCode
		}
		if inCode && (registers.MatchString(l) || inInsn && crashInSystem && !strings.HasPrefix(l, "```")) {
			continue
		}
		if strings.HasPrefix(l, "| ") && tableRowInSystem(l, system) {
			continue
		}
		l = neutralLine(l, sysFuncs)
		if strings.HasPrefix(l, "| Threads |") {
			inGroups = true
		}
		if inGroups && strings.HasPrefix(l, "|") {
			groups = append(groups, neutralTopFrame(l, ownFuncs))
			continue
		}
		inGroups = false
		sort.Strings(groups)
		out = append(append(out, groups...), l)
		groups = nil
	}
	sort.Strings(groups)
	return strings.Join(append(out, groups...), "\n")
}

// neutralLine masks one line's machine-dependent words: system functions,
// addresses, build-ids, the corpus's directory, frame numbers, and numbers
// of two digits or more that are not source lines (pids and thread ids, of
// whatever size the machine gives them; the goldens' are not known here).
func neutralLine(l string, sysFuncs map[string]bool) string {
	for fn := range sysFuncs {
		l = strings.ReplaceAll(l, "`"+fn+"`", "`SYSTEM`")
	}
	l = hexAddr.ReplaceAllString(l, "0xADDR")
	l = buildID12.ReplaceAllString(l, "| BUILDID |")
	l = corpusDir.ReplaceAllString(l, "CORPUS/")
	l = frameIndex.ReplaceAllString(l, "| #N |")
	return number.ReplaceAllString(l, "${1}N")
}

// tableRowInSystem reports whether a table row names a system module in
// one of its cells (the Component column of the call chain, the Module
// column of the environment).
func tableRowInSystem(row string, system map[string]bool) bool {
	for _, cell := range strings.Split(row, "|") {
		cell = strings.TrimSpace(cell)
		if system[cell] || system[filepath.Base(cell)] && isSystemPath(cell) {
			return true
		}
	}
	return false
}

// isSystemPath reports whether path is a file of the distribution's
// packages rather than of the corpus.
func isSystemPath(path string) bool {
	for _, p := range []string{"/usr/", "/lib/", "/lib64/"} {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// neutralTopFrame masks the Top frame cell of a row of the thread-group
// table unless it is a function of the corpus: a system function's name
// is not known from the other machine's libraries.
func neutralTopFrame(row string, ownFuncs map[string]bool) string {
	cells := strings.Split(row, "|")
	if len(cells) < 4 {
		return row
	}
	fn := strings.Trim(strings.TrimSpace(cells[2]), "`")
	if strings.HasPrefix(cells[2], " `") && !ownFuncs[fn] {
		cells[2] = " `SYSTEM` "
	}
	return strings.Join(cells, "|")
}
