package moduleorigin

import (
	"strings"

	"github.com/faultline-dev/faultline/internal/lazyregexp"
)

// A tagStyle turns an upstream release version ("1.2.12") into the tags
// (or branches) that release may be cut as, most likely first.
type tagStyle func(version string) []string

// vTags is "v1.2.3", then "1.2.3" (zlib, CPython, numpy, pytorch…).
func vTags(v string) []string { return []string{"v" + v, v} }

// plainTags is "1.2.3", then "v1.2.3" (fmt, abseil, opencv…).
func plainTags(v string) []string { return []string{v, "v" + v} }

// prefixTags is PREFIX+"1.2.3" (glibc-2.36, llvmorg-14.0.6, n5.1.6…).
func prefixTags(prefix string) tagStyle {
	return func(v string) []string { return []string{prefix + v} }
}

// underscoreTags is PREFIX with the version's dots as underscores
// (curl-7_88_1, R_2_5_0, hdf5-1_10_8, OpenSSL_1_1_1w).
func underscoreTags(prefix string) tagStyle {
	return func(v string) []string { return []string{prefix + strings.ReplaceAll(v, ".", "_")} }
}

// anyTags joins styles, dropping repeats.
func anyTags(styles ...tagStyle) tagStyle {
	return func(v string) []string {
		var out []string
		for _, s := range styles {
			for _, t := range s(v) {
				out = AppendUnique(out, t)
			}
		}
		return out
	}
}

// GenericTags are the conventions tried for a repository the registry does
// not know (a rule's bare version, a package's upstream URL): v1.2.3,
// 1.2.3 and NAME-1.2.3.
func GenericTags(name string) tagStyle {
	styles := []tagStyle{vTags}
	if name != "" {
		styles = append(styles, prefixTags(name+"-"))
	}
	return anyTags(styles...)
}

// releaseVersionRE is what a release version looks like after cleaning.
var releaseVersionRE = lazyregexp.New(`^[0-9]+(\.[0-9]+)*([a-z][0-9a-z]*)?$`)

// LooksLikeRelease reports whether v is a plain release version that tag
// conventions apply to (not a branch or commit).
func LooksLikeRelease(v string) bool {
	return releaseVersionRE.MatchString(v) && !FullHashRE.MatchString(v)
}

// FullHashRE matches a full commit hash; HexRE an abbreviated one too.
var (
	FullHashRE = lazyregexp.New(`^[0-9a-f]{40}$`)
	HexRE      = lazyregexp.New(`^[0-9a-f]{7,40}$`)
)

// AppendUnique appends v to s unless s holds it already.
func AppendUnique(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}
