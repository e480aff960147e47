package gitsrc

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// dpkgOwners maps each of the given file paths to the Debian package that
// installed it and that package's version, from <sysroot>/var/lib/dpkg
// (info/*.list and status). Paths not found are absent from the result.
func dpkgOwners(sysroot string, paths []string) map[string][2]string {
	out := map[string][2]string{}
	if len(paths) == 0 {
		return out
	}
	want := map[string]bool{}
	for _, p := range paths {
		want[p] = true
	}
	db := filepath.Join(sysroot, "/var/lib/dpkg")
	lists, _ := filepath.Glob(filepath.Join(db, "info", "*.list"))
	owner := map[string]string{}
	for _, l := range lists {
		if len(owner) == len(want) {
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
			if want[sc.Text()] {
				owner[sc.Text()] = pkg
			}
		}
	}
	if len(owner) == 0 {
		return out
	}
	versions := parseDpkgStatus(readStatus(filepath.Join(db, "status")))
	for p, pkg := range owner {
		out[p] = [2]string{pkg, versions[pkg]}
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

// parseDpkgStatus reads the Package and Version fields of a dpkg status
// file (deb822 paragraphs, dpkg(1) "status" database).
func parseDpkgStatus(b []byte) map[string]string {
	out := map[string]string{}
	var pkg, ver string
	flush := func() {
		if pkg != "" && ver != "" {
			out[pkg] = ver
		}
		pkg, ver = "", ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, "Package:"):
			pkg = strings.TrimSpace(line[len("Package:"):])
		case strings.HasPrefix(line, "Version:"):
			ver = strings.TrimSpace(line[len("Version:"):])
		}
	}
	flush()
	return out
}
