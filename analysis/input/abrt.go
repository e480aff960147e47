package input

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/faultline-dev/faultline/analysis/model"
)

// An ABRT problem directory (Fedora's /var/spool/abrt/ccpp-*, abrt's
// dump_dir) holds one file per item: the core in coredump, the program's
// path in executable, its command line in cmdline, its package in package
// ("NAME-[EPOCH:]VERSION-RELEASE", abrt-action-save-package-data) with
// pkg_name, pkg_epoch, pkg_version, pkg_release, pkg_arch, pkg_vendor and
// the source package in component, and dso_list: one line per shared
// object mapped, "PATH NEVRA (VENDOR) INSTALLTIME" (abrt-action-list-dsos).

// abrtCore is the problem directory's core file.
const abrtCore = "coredump"

// Caps on what is read of the problem directory's text files.
const (
	maxABRTItem    = 64 << 10
	maxABRTDSOList = 4 << 20
)

// IsABRTDir reports whether dir is an ABRT problem directory: a directory
// holding a coredump file.
func IsABRTDir(dir string) bool {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return false
	}
	st, err := os.Stat(filepath.Join(dir, abrtCore))
	return err == nil && st.Mode().IsRegular()
}

// openABRT opens the core of the ABRT problem directory dir (as a dump
// file: compressed or not) and keeps what the directory says of the
// program and its packages in Report. The dump is named by dir.
func openABRT(dir string) (*Input, error) {
	if !IsABRTDir(dir) {
		return nil, fmt.Errorf("%s is a directory, not a dump (an ABRT problem directory holds its core in %s; this one has none)", dir, abrtCore)
	}
	in, err := Open(filepath.Join(dir, abrtCore))
	if err != nil {
		return nil, err
	}
	in.Name = dir
	in.Report = abrtReport(dir)
	return in, nil
}

// abrtItem is the text of item name of dir, trimmed; "" when it is absent,
// not a regular file or unreadable. At most limit bytes are read.
func abrtItem(dir, name string, limit int64) string {
	p := filepath.Join(dir, name)
	st, err := os.Lstat(p)
	if err != nil || !st.Mode().IsRegular() {
		return ""
	}
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, limit))
	return strings.TrimSpace(string(b))
}

// abrtReport reads the problem directory's items about the program and
// its packages.
func abrtReport(dir string) *Report {
	item := func(name string) string { return abrtItem(dir, name, maxABRTItem) }
	rep := &Report{Kind: "abrt", Executable: item("executable"), Command: item("cmdline")}
	if p, ok := abrtProgramPackage(item); ok {
		rep.Packages = append(rep.Packages, p)
	}
	rep.Packages = append(rep.Packages, abrtDSOPackages(abrtItem(dir, "dso_list", maxABRTDSOList))...)
	return rep
}

// abrtProgramPackage is the crashed program's package: pkg_name and its
// siblings when ABRT wrote them, else the package NVR split.
func abrtProgramPackage(item func(string) string) (model.Package, bool) {
	p := model.Package{Origin: "abrt", Program: true, Source: item("component"), Arch: item("pkg_arch"),
		Archive: item("pkg_vendor")}
	if name, ver, rel := item("pkg_name"), item("pkg_version"), item("pkg_release"); name != "" && ver != "" {
		p.Name, p.Version = name, ver
		if rel != "" {
			p.Version += "-" + rel
		}
		if e := item("pkg_epoch"); e != "" && e != "0" {
			p.Version = e + ":" + p.Version
		}
		return p, true
	}
	name, version, err := splitNVR(item("package"))
	if err != nil {
		return p, false
	}
	p.Name, p.Version = name, version
	return p, true
}

// splitNVR splits an RPM "NAME-[EPOCH:]VERSION-RELEASE" into the name and
// "[EPOCH:]VERSION-RELEASE".
func splitNVR(nvr string) (name, version string, err error) {
	r := strings.LastIndexByte(nvr, '-')
	if r <= 0 {
		return "", "", errors.New("not NAME-VERSION-RELEASE")
	}
	v := strings.LastIndexByte(nvr[:r], '-')
	if v <= 0 {
		return "", "", errors.New("not NAME-VERSION-RELEASE")
	}
	return nvr[:v], nvr[v+1:], nil
}

// rpmArches are the architectures an RPM NEVRA may end with.
var rpmArches = map[string]bool{"x86_64": true, "i686": true, "i586": true, "i386": true, "aarch64": true,
	"ppc64le": true, "ppc64": true, "s390x": true, "armv7hl": true, "noarch": true, "riscv64": true}

// abrtDSOPackages reads dso_list into one package per NEVRA with the
// objects it provides.
func abrtDSOPackages(list string) []model.Package {
	byNEVRA := map[string]*model.Package{}
	var order []string
	for _, line := range strings.Split(list, "\n") {
		path, rest, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok || !strings.HasPrefix(path, "/") {
			continue
		}
		nevra, rest, _ := strings.Cut(strings.TrimSpace(rest), " ")
		p := byNEVRA[nevra]
		if p == nil {
			arch := ""
			nvr := nevra
			if i := strings.LastIndexByte(nevra, '.'); i > 0 && rpmArches[nevra[i+1:]] {
				nvr, arch = nevra[:i], nevra[i+1:]
			}
			name, version, err := splitNVR(nvr)
			if err != nil {
				continue
			}
			p = &model.Package{Name: name, Version: version, Arch: arch, Origin: "abrt"}
			if open, close := strings.IndexByte(rest, '('), strings.LastIndexByte(rest, ')'); open >= 0 && close > open {
				if v := rest[open+1 : close]; v != "None" && v != "(none)" {
					p.Archive = v
				}
			}
			byNEVRA[nevra] = p
			order = append(order, nevra)
		}
		p.Files = append(p.Files, path)
	}
	out := make([]model.Package, 0, len(order))
	for _, n := range order {
		out = append(out, *byNEVRA[n])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
