package pkgdb

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/faultline-dev/faultline/internal/lazyregexp"
)

// dpkgPackage is what Debian's package database says about the package
// that installed a file.
type dpkgPackage struct {
	// Name and Version are the binary package's (zlib1g, 1:1.2.13.dfsg-1).
	Name, Version string
	// Source and SourceVersion are the source package it was built from
	// (status "Source: gcc-12 (12.2.0-14)"; the binary's name and version
	// when status names none).
	Source, SourceVersion string
}

// mergedUsrAliases are the other names a file has on a merged-/usr system
// (Debian 12: /lib is a link to /usr/lib): a core maps
// /usr/lib/x86_64-linux-gnu/libc.so.6 where dpkg lists
// /lib/x86_64-linux-gnu/libc.so.6, and the other way round once packages
// move their files to /usr.
func mergedUsrAliases(p string) []string {
	for _, d := range []string{"/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/", "/libx32/"} {
		if strings.HasPrefix(p, "/usr"+d) {
			return []string{p[len("/usr"):]}
		}
		if strings.HasPrefix(p, d) {
			return []string{"/usr" + p}
		}
	}
	return nil
}

// dpkgOwners maps each of the given file paths to the Debian package that
// installed it, from <sysroot>/var/lib/dpkg (info/*.list and status),
// under the path or its merged-/usr alias. Paths not found are absent.
func dpkgOwners(sysroot string, paths []string) map[string]dpkgPackage {
	out := map[string]dpkgPackage{}
	if len(paths) == 0 {
		return out
	}
	want := map[string]string{} // listed name → module path
	for _, p := range paths {
		want[p] = p
		for _, a := range mergedUsrAliases(p) {
			if _, ok := want[a]; !ok {
				want[a] = p
			}
		}
	}
	db := filepath.Join(sysroot, "/var/lib/dpkg")
	lists, _ := filepath.Glob(filepath.Join(db, "info", "*.list"))
	owner := map[string]string{}
	for _, l := range lists {
		if len(owner) == len(paths) {
			break
		}
		b, err := readSmall(l)
		if err != nil {
			continue
		}
		pkg := strings.TrimSuffix(filepath.Base(l), ".list")
		pkg, _, _ = strings.Cut(pkg, ":") // multiarch "libfoo:amd64"
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if p, ok := want[sc.Text()]; ok {
				if _, done := owner[p]; !done {
					owner[p] = pkg
				}
			}
		}
	}
	if len(owner) == 0 {
		return out
	}
	status := parseDpkgStatus(readStatus(filepath.Join(db, "status")))
	for p, pkg := range owner {
		dp, ok := status[pkg]
		if !ok {
			dp = dpkgPackage{Name: pkg}
		}
		out[p] = dp
	}
	return out
}

func readStatus(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 64<<20))
	return b
}

// sourceFieldRE is status's Source field: a name, and the source version
// when it differs from the binary's ("gcc-12 (12.2.0-14)").
var sourceFieldRE = lazyregexp.New(`^(\S+)(?:\s+\((\S+)\))?$`)

// parseDpkgStatus reads the Package, Version and Source fields of a dpkg
// status file (deb822 paragraphs, dpkg(1) "status" database). The first
// paragraph of a package wins (multiarch lists it once per architecture).
func parseDpkgStatus(b []byte) map[string]dpkgPackage {
	out := map[string]dpkgPackage{}
	var cur dpkgPackage
	flush := func() {
		if _, seen := out[cur.Name]; cur.Name != "" && cur.Version != "" && !seen {
			cur.Source = firstNonEmpty(cur.Source, cur.Name)
			cur.SourceVersion = firstNonEmpty(cur.SourceVersion, cur.Version)
			out[cur.Name] = cur
		}
		cur = dpkgPackage{}
	}
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, "Package:"):
			cur.Name = strings.TrimSpace(line[len("Package:"):])
		case strings.HasPrefix(line, "Version:"):
			cur.Version = strings.TrimSpace(line[len("Version:"):])
		case strings.HasPrefix(line, "Source:"):
			if m := sourceFieldRE.FindStringSubmatch(strings.TrimSpace(line[len("Source:"):])); m != nil {
				cur.Source, cur.SourceVersion = m[1], m[2]
			}
		}
	}
	flush()
	return out
}

// debianCopyright is the header of a machine-readable debian/copyright
// (DEP-5): the upstream's name and where its source comes from.
type debianCopyright struct {
	UpstreamName, Source string
}

// readDebianCopyright reads the header paragraph of
// <sysroot>/usr/share/doc/PKG/copyright; zero when there is none or it is
// not machine-readable.
func readDebianCopyright(sysroot, pkg string) debianCopyright {
	var dc debianCopyright
	if pkg == "" || strings.ContainsAny(pkg, "/\x00") {
		return dc
	}
	b, err := readSmall(filepath.Join(sysroot, "/usr/share/doc", pkg, "copyright"))
	if err != nil {
		return dc
	}
	header, _, _ := bytes.Cut(b, []byte("\n\n"))
	for _, line := range strings.Split(string(header), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, " ") {
			continue
		}
		switch strings.TrimSpace(k) {
		case "Upstream-Name":
			dc.UpstreamName = strings.TrimSpace(v)
		case "Source":
			dc.Source = strings.TrimSpace(v)
		}
	}
	return dc
}

// gitHostRE recognises a repository URL on a git host among a copyright
// file's sources (the first such URL).
var gitHostRE = lazyregexp.New(`https://(github\.com|gitlab\.com|codeberg\.org|bitbucket\.org|salsa\.debian\.org|gitlab\.[a-z.]+)/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+`)

// repositoryURL is the git repository a copyright Source names, if any:
// "https://github.com/pytorch/pytorch/releases" → https://github.com/pytorch/pytorch.
func (dc debianCopyright) repositoryURL() string {
	u := gitHostRE.FindString(dc.Source)
	return strings.TrimSuffix(u, ".git")
}
