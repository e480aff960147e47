package pkgdb

import (
	"regexp"
	"strings"
)

var (
	// debianSnapshotRE is a Debian version of a git snapshot:
	// 0.0~git20220216.ae108ef (the commit is the last element).
	debianSnapshotRE = regexp.MustCompile(`[~+.]git\.?[0-9]{8}\.([0-9a-f]{7,40})$`)
	// repackRE is a repack suffix: 1.2.13.dfsg, 1.13.1+dfsg, 2.1+ds1, 3.0~dfsg2.
	repackRE = regexp.MustCompile(`[.+~](dfsg|ds|repack|debian)[0-9]*$`)
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
