package gitsrc

import (
	"strings"

	"github.com/faultline-dev/faultline/gitsrc/pkgdb"
)

// Backport is one change a package's changelog says it made (pkgdb).
type Backport = pkgdb.Backport

// loadBackports reads the changelog of every component installed by dpkg.
func loadBackports(comps []*component, sysroot string) {
	for _, comp := range comps {
		if p := comp.Package; p != nil && p.Manager == "dpkg" {
			comp.changelog = upTo(pkgdb.ReadDebianChangelog(sysroot, p), p.Version)
			comp.Backports = pkgdb.SinceRelease(comp.changelog, p.Upstream)
		}
	}
}

// upTo drops the changes of uploads after version: the changelog on this
// machine may be newer than the package a crash reporter recorded.
func upTo(all []Backport, version string) []Backport {
	out := all[:0:0]
	for _, b := range all {
		if pkgdb.CompareDebianVersions(b.Version, version) <= 0 {
			out = append(out, b)
		}
	}
	return out
}

// backportOf finds the change of a component's changelog that applied an
// upstream commit: by its hash, a CVE id its message names, or its subject.
func (comp *component) backportOf(commit, subject, message string) *Backport {
	cves := pkgdb.CVEs(message)
	for i := range comp.changelog {
		b := &comp.changelog[i]
		if b.Names("", commit) || subject != "" && b.Describes(subject) {
			return b
		}
		for _, c := range cves {
			if b.Names(c, "") {
				return b
			}
		}
	}
	return nil
}

// markBackports marks the upstream commits of the review that the
// component's package says it applied.
func markBackports(res *Result, comps []*component) {
	byName := map[string]*component{}
	for _, comp := range comps {
		byName[comp.Name] = comp
	}
	for i := range res.Upstream {
		comp := byName[res.Upstream[i].Component]
		if comp == nil || len(comp.changelog) == 0 {
			continue
		}
		for j := range res.Upstream[i].Commits {
			rc := &res.Upstream[i].Commits[j]
			if b := comp.backportOf(rc.Commit, rc.Subject, rc.Message); b != nil {
				rc.Backported = b.Version
			}
		}
	}
}

// cveID reports whether s is a CVE id ("cve-2022-37434" as well).
func cveID(s string) (string, bool) {
	u := strings.ToUpper(strings.TrimSpace(s))
	cves := pkgdb.CVEs(u)
	return u, len(cves) == 1 && cves[0] == u
}

// fixFromBackports answers --fix from the changelogs: a CVE id (cve set)
// or the commit fc names (and its subject, when the repository knew it).
// The answer is included when a package says it applied the fix;
// otherwise fc is returned unchanged (a CVE unknown: not known).
func fixFromBackports(comps []*component, fc *FixCheck, cve string) *FixCheck {
	if fc == nil {
		fc = &FixCheck{}
	}
	for _, comp := range comps {
		var b *Backport
		if cve != "" {
			for i := range comp.changelog {
				if comp.changelog[i].Names(cve, "") {
					b = &comp.changelog[i]
					break
				}
			}
		} else {
			b = comp.backportOf(fc.Commit, fc.Subject, "")
		}
		if b != nil {
			return &FixCheck{Commit: fc.Commit, Component: comp.Name, Revision: comp.Revision, Included: true, Known: true,
				Subject: fc.Subject, Backport: b, Reason: backportReason(comp.Package, b)}
		}
	}
	if cve != "" {
		fc.Reason = "no changelog of the crash's packages names " + cve +
			" (its fix may still be in the upstream release): pass the fix's commit to check the crashing revision's history"
	}
	return fc
}

// backportReason says which package version applied a fix, and onto which
// upstream release when that is older than the installed one's.
func backportReason(p *Package, b *Backport) string {
	if b.NewUpstream() {
		return "fixed upstream in " + b.Upstream + ", which " + p.Name + " " + b.Version + " packaged: " + b.Text
	}
	r := "backported in " + p.Name + " " + b.Version
	if b.Upstream != p.Upstream {
		r += " (onto upstream " + b.Upstream + ", before this package's " + p.Upstream + ")"
	}
	return r + ": " + b.Text
}
