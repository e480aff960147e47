package pkgdb

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

const (
	// maxRPMQueries caps the files asked of rpm for one crash.
	maxRPMQueries = 64
	// rpmTimeout bounds all of one crash's rpm queries.
	rpmTimeout = 20 * time.Second
)

// rpmQueryFormat prints name, epoch:version-release, version and source
// rpm, tab-separated (rpm --queryformat tags).
const rpmQueryFormat = `%{NAME}\t%{EPOCHNUM}:%{VERSION}-%{RELEASE}\t%{VERSION}\t%{SOURCERPM}\n`

// rpmOwners asks rpm (rpm -qf, under --root sysroot) which package
// installed each path, where this machine has rpm and the root has an rpm
// database. Paths no package owns are absent.
func rpmOwners(sysroot string, paths []string) map[string]*Package {
	out := map[string]*Package{}
	bin, err := exec.LookPath("rpm")
	if err != nil || len(paths) == 0 {
		return out
	}
	db := rpmDatabase(sysroot)
	if db == "" {
		return out
	}
	ctx, cancel := context.WithTimeout(context.Background(), rpmTimeout)
	defer cancel()
	for i, p := range paths {
		if i == maxRPMQueries || ctx.Err() != nil {
			break
		}
		if !filepath.IsAbs(p) {
			continue
		}
		for _, name := range append([]string{p}, mergedUsrAliases(p)...) {
			if pkg := rpmQueryFile(ctx, bin, sysroot, db, name); pkg != nil {
				out[p] = pkg
				break
			}
		}
	}
	return out
}

// rpmDatabase is the root's rpm database directory (the sqlite or Berkeley
// DB backends, new and old locations), "" when it has none. It is passed
// to rpm explicitly: rpm's own default differs between distributions
// (Debian's rpm uses ~/.rpmdb).
func rpmDatabase(sysroot string) string {
	for _, d := range []string{"/usr/lib/sysimage/rpm", "/var/lib/rpm"} {
		for _, f := range []string{"rpmdb.sqlite", "Packages", "Packages.db"} {
			if fileExists(sysrootPath(sysroot, filepath.Join(d, f))) {
				return d
			}
		}
	}
	return ""
}

// rpmQueryFile runs rpm -qf for one file.
func rpmQueryFile(ctx context.Context, bin, sysroot, db, file string) *Package {
	args := []string{"--dbpath", db, "-qf", "--queryformat", rpmQueryFormat}
	if sysroot != "" {
		args = append([]string{"--root", sysroot}, args...)
	}
	cmd := exec.CommandContext(ctx, bin, append(args, file)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	b, err := cmd.Output()
	if err != nil {
		return nil
	}
	return parseRPMQuery(string(b))
}

// parseRPMQuery reads the first line rpmQueryFormat printed.
func parseRPMQuery(out string) *Package {
	line, _, _ := strings.Cut(out, "\n")
	f := strings.Split(line, "\t")
	if len(f) != 4 || f[0] == "" {
		return nil
	}
	ver := strings.TrimPrefix(f[1], "0:")
	src, srcVer := splitRPMSource(f[3])
	return &Package{Manager: "rpm", Name: f[0], Version: ver, Source: src, SourceVersion: srcVer, Upstream: f[2]}
}
