package pkgdb

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/faultline-dev/faultline/internal/lazyregexp"
)

// Backport is one change a distribution package's changelog says it made
// (a bullet of a Debian changelog entry) that names a CVE or an upstream
// commit.
type Backport struct {
	// Version is the package version whose entry says it ("1:1.2.11.dfsg-4.1").
	Version string `json:"version"`
	// Upstream is that version's upstream release ("1.2.11").
	Upstream string   `json:"upstream"`
	CVEs     []string `json:"cves,omitempty"`
	// Commits are the abbreviated or full commit hashes the change names.
	Commits []string `json:"commits,omitempty"`
	// Text is the bullet as the packager wrote it, on one line (capped).
	Text string `json:"text"`
}

const (
	// maxChangelog caps the decompressed changelog read.
	maxChangelog = 4 << 20
	// maxChangelogItems caps the bullets kept from one changelog.
	maxChangelogItems = 5000
	// maxBackportText caps one bullet's text.
	maxBackportText = 600
)

var (
	// changelogHeaderRE is an entry's first line: "zlib (1:1.2.13.dfsg-1) unstable; urgency=low".
	changelogHeaderRE = lazyregexp.New(`^([a-z0-9][a-z0-9+.-]*) \(([^() ]+)\) [^;]*;`)
	cveRE             = lazyregexp.New(`CVE-[0-9]{4}-[0-9]{4,}`)
	// commitWordRE is a word that may be a commit hash; commitHash checks it.
	commitWordRE = lazyregexp.New(`\b[0-9a-f]{7,40}\b`)
	// newUpstreamRE is a change that imports the upstream release itself:
	// the CVEs it names are fixed upstream, not on top of it.
	newUpstreamRE = lazyregexp.New(`(?i)^(import(ing)? )?new upstream`)
)

// ReadDebianChangelog reads the changes of <sysroot>/usr/share/doc/PKG/
// changelog.Debian.gz (the binary package's, else the source package's
// directory), one per top-level bullet, newest first; bounded by
// maxChangelog bytes and maxChangelogItems bullets.
func ReadDebianChangelog(sysroot string, p *Package) []Backport {
	for _, name := range []string{p.Name, p.Source} {
		if name == "" || strings.ContainsAny(name, "/\x00") {
			continue
		}
		f, err := os.Open(filepath.Join(sysroot, "/usr/share/doc", name, "changelog.Debian.gz"))
		if err != nil {
			continue
		}
		defer f.Close()
		zr, err := gzip.NewReader(io.LimitReader(f, maxChangelog))
		if err != nil {
			return nil
		}
		return ParseDebianChangelog(io.LimitReader(zr, maxChangelog))
	}
	return nil
}

// ParseDebianChangelog splits a Debian changelog (deb-changelog(5)) into
// its bullets, each with the version of its entry.
func ParseDebianChangelog(r io.Reader) []Backport {
	var out []Backport
	var version string
	var cur *strings.Builder
	flush := func() {
		if cur != nil && version != "" && len(out) < maxChangelogItems {
			out = append(out, newBackport(version, cur.String()))
		}
		cur = nil
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case changelogHeaderRE.MatchString(line):
			flush()
			version = changelogHeaderRE.FindStringSubmatch(line)[2]
		case strings.HasPrefix(line, " -- "):
			flush()
		case strings.HasPrefix(line, "  * "):
			flush()
			cur = &strings.Builder{}
			cur.WriteString(strings.TrimSpace(line[4:]))
		case cur != nil && strings.TrimSpace(line) != "" && cur.Len() < maxBackportText:
			cur.WriteString(" " + strings.TrimSpace(line))
		}
	}
	flush()
	return out
}

func newBackport(version, text string) Backport {
	if len(text) > maxBackportText {
		text = text[:maxBackportText]
	}
	b := Backport{Version: version, Upstream: DebianUpstream(version), Text: text}
	for _, c := range cveRE.FindAllString(text, -1) {
		b.CVEs = appendUnique(b.CVEs, c)
	}
	for _, loc := range commitWordRE.FindAllStringIndex(text, -1) {
		if w := text[loc[0]:loc[1]]; commitHash(w) && !inVersion(text, loc[0], loc[1]) {
			b.Commits = appendUnique(b.Commits, w)
		}
	}
	return b
}

// inVersion reports whether the word at text[i:j] is part of a version
// or a snapshot name ("kineto 20210224.0703c78", "1.2+git.ab12cd3"): a
// commit of another project, not one the change applied.
func inVersion(text string, i, j int) bool {
	joined := func(c byte) bool { return c == '.' || c == '+' || c == '~' || c == '-' || c == '_' }
	return i > 0 && joined(text[i-1]) || j < len(text) && j+1 < len(text) && joined(text[j]) && text[j+1] != ' '
}

// commitHash reports whether a hexadecimal word reads as a commit hash:
// digits and letters both (not a date, not a word such as "decade").
func commitHash(w string) bool {
	return strings.ContainsAny(w, "0123456789") && strings.ContainsAny(w, "abcdef")
}

// Names reports whether the change names CVE id or commit (a full hash
// the change abbreviates, or an abbreviation of it).
func (b *Backport) Names(cve, commit string) bool {
	for _, c := range b.CVEs {
		if cve != "" && c == cve {
			return true
		}
	}
	for _, h := range b.Commits {
		if commit != "" && len(h) >= 7 && len(commit) >= 7 && (strings.HasPrefix(commit, h) || strings.HasPrefix(h, commit)) {
			return true
		}
	}
	return false
}

// Describes reports whether the change's text carries a commit's subject
// (Debian often quotes upstream's subject: "Fix a bug when getting a gzip
// header extra field with inflate()"). Short subjects never match.
func (b *Backport) Describes(subject string) bool {
	s := normalizeSentence(subject)
	return len(s) >= 24 && strings.Contains(normalizeSentence(b.Text), s)
}

// normalizeSentence lowercases, joins whitespace and drops a final period.
func normalizeSentence(s string) string {
	return strings.TrimSuffix(strings.Join(strings.Fields(strings.ToLower(s)), " "), ".")
}

// SinceRelease are the changes that name a CVE or commit made on top of
// the given upstream release (what the package adds to the tag); the
// change that imported the release itself is not one.
func SinceRelease(all []Backport, upstream string) []Backport {
	var out []Backport
	for _, b := range all {
		if b.Upstream == upstream && (len(b.CVEs) > 0 || len(b.Commits) > 0) && !b.NewUpstream() {
			out = append(out, b)
		}
	}
	return out
}

// CVEs are the CVE ids a text names, in order, each once.
func CVEs(text string) []string {
	var out []string
	for _, c := range cveRE.FindAllString(text, -1) {
		out = appendUnique(out, c)
	}
	return out
}

// NewUpstream reports whether the change imported an upstream release
// ("New upstream version 1.13.1 … Fixes CVE-2022-45907"): what it names is
// fixed upstream, not backported.
func (b *Backport) NewUpstream() bool {
	return newUpstreamRE.MatchString(b.Text)
}
