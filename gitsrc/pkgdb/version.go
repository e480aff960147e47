package pkgdb

import (
	"strings"

	"github.com/faultline-dev/faultline/internal/lazyregexp"
)

var (
	// debianSnapshotRE is a Debian version of a git snapshot:
	// 0.0~git20220216.ae108ef (the commit is the last element).
	debianSnapshotRE = lazyregexp.New(`[~+.]git\.?[0-9]{8}\.([0-9a-f]{7,40})$`)
	// repackRE is a repack suffix: 1.2.13.dfsg, 1.13.1+dfsg, 2.1+ds1, 3.0~dfsg2.
	repackRE = lazyregexp.New(`[.+~](dfsg|ds|repack|debian)[0-9]*$`)
)

// DebianUpstream is the upstream part of a Debian package version: epoch
// and Debian revision dropped ("1:1.2.13.dfsg-1" → "1.2.13"), repack
// suffixes dropped (".dfsg", "+dfsg", "+ds", "~dfsg"), the version after
// "really" kept ("2.4+really2.3" → "2.3"). A git snapshot
// ("0.0~git20220216.ae108ef") gives its commit as the version.
func DebianUpstream(v string) string {
	if i := strings.IndexByte(v, ':'); i >= 0 {
		v = v[i+1:]
	}
	if i := strings.LastIndexByte(v, '-'); i > 0 {
		v = v[:i]
	}
	if i := strings.LastIndex(v, "really"); i >= 0 {
		v = v[i+len("really"):]
	}
	if m := debianSnapshotRE.FindStringSubmatch(v); m != nil {
		return m[1]
	}
	for {
		loc := repackRE.FindStringIndex(v)
		if loc == nil {
			break
		}
		v = v[:loc[0]]
	}
	// Whatever Debian appended after a "+" (+deb12u1, +b1, +cuda12.4) is not upstream's.
	if i := strings.IndexByte(v, '+'); i > 0 {
		v = v[:i]
	}
	return strings.TrimSuffix(v, ".")
}

// CompareDebianVersions orders two Debian package versions as dpkg does
// (deb-version(7): epoch, then upstream version and Debian revision, each
// compared as alternating non-digit and digit runs, "~" sorting before
// everything, even the end): -1, 0 or 1.
func CompareDebianVersions(a, b string) int {
	ea, ua, ra := splitDebianVersion(a)
	eb, ub, rb := splitDebianVersion(b)
	if c := compareNumbers(ea, eb); c != 0 {
		return c
	}
	if c := compareVersionPart(ua, ub); c != 0 {
		return c
	}
	return compareVersionPart(ra, rb)
}

// splitDebianVersion splits [epoch:]upstream[-revision].
func splitDebianVersion(v string) (epoch, upstream, revision string) {
	epoch = "0"
	if i := strings.IndexByte(v, ':'); i >= 0 {
		epoch, v = v[:i], v[i+1:]
	}
	if i := strings.LastIndexByte(v, '-'); i >= 0 {
		return epoch, v[:i], v[i+1:]
	}
	return epoch, v, ""
}

// compareVersionPart is dpkg's verrevcmp.
func compareVersionPart(a, b string) int {
	for a != "" || b != "" {
		var na, nb string
		na, a = leading(a, false)
		nb, b = leading(b, false)
		if c := compareNonDigits(na, nb); c != 0 {
			return c
		}
		na, a = leading(a, true)
		nb, b = leading(b, true)
		if c := compareNumbers(na, nb); c != 0 {
			return c
		}
	}
	return 0
}

// leading splits s after its leading run of digits (or of non-digits).
func leading(s string, digits bool) (string, string) {
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9') == digits {
		i++
	}
	return s[:i], s[i:]
}

// compareNumbers compares runs of digits as numbers, of any length.
func compareNumbers(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

// compareNonDigits compares runs of non-digits by dpkg's order: "~" first,
// then the end of the run, then letters, then other characters.
func compareNonDigits(a, b string) int {
	order := func(s string, i int) int {
		switch {
		case i >= len(s):
			return 0
		case s[i] == '~':
			return -1
		case s[i] >= 'A' && s[i] <= 'Z' || s[i] >= 'a' && s[i] <= 'z':
			return int(s[i])
		}
		return int(s[i]) + 256
	}
	for i := 0; i < len(a) || i < len(b); i++ {
		if x, y := order(a, i), order(b, i); x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}
