package gitsrc

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/gitsrc/pkgdb"
)

// TestRPMInventory: a root whose rpm database (built by the real rpm and
// rpmbuild, at /var/lib/rpm as Fedora and RHEL keep it) says zlib
// 1.2.13-3.fc38 installed /usr/lib64/libz.so.1.2.13: the inventory asks
// rpm -qf and names zlib with its source rpm, madler/zlib and v1.2.13.
func TestRPMInventory(t *testing.T) {
	for _, tool := range []string{"rpm", "rpmbuild"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (apt-get install rpm)", tool)
		}
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	lib, err := os.ReadFile("/usr/lib/x86_64-linux-gnu/libz.so.1")
	if err != nil {
		t.Fatal(err)
	}
	putFile(t, dir, "payload/libz.so.1.2.13", lib)
	putFile(t, dir, "top/SPECS/zlib.spec", []byte(`Name: zlib
Version: 1.2.13
Release: 3.fc38
Summary: compression library
License: Zlib
BuildArch: x86_64
%description
compression library
%install
mkdir -p %{buildroot}/usr/lib64
cp `+filepath.Join(dir, "payload", "libz.so.1.2.13")+` %{buildroot}/usr/lib64/
%files
/usr/lib64/libz.so.1.2.13
`))
	for _, args := range [][]string{
		{"rpmbuild", "-bb", "--define", "_topdir " + filepath.Join(dir, "top"), "--define", "debug_package %{nil}",
			"--define", "__os_install_post %{nil}", filepath.Join(dir, "top", "SPECS", "zlib.spec")},
		{"rpm", "--root", root, "--dbpath", "/var/lib/rpm", "--initdb"},
		{"rpm", "--root", root, "--dbpath", "/var/lib/rpm", "-i", "--nodeps", "--justdb", "--noscripts", "--ignorearch", "--ignoreos",
			filepath.Join(dir, "top", "RPMS", "x86_64", "zlib-1.2.13-3.fc38.x86_64.rpm")},
	} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	putFile(t, root, "usr/lib64/libz.so.1.2.13", lib)
	mod := "/usr/lib64/libz.so.1.2.13"
	c := &analysis.Crash{Modules: []analysis.Module{{Path: mod}},
		Threads: []analysis.Thread{{ID: 1, Crashed: true, Frames: []analysis.Frame{{Module: mod, Function: "crc32_z"}}}}}
	comps, problems := inventory(c, &Options{Sysroot: root}, map[string][]string{})
	if len(comps) != 1 {
		t.Fatalf("components %+v, problems %+v", comps, problems)
	}
	comp := comps[0]
	p := comp.Package
	if p == nil || p.Manager != "rpm" || p.Name != "zlib" || p.Version != "1.2.13-3.fc38" || p.Source != "zlib" || p.Upstream != "1.2.13" {
		t.Errorf("package %+v; want rpm zlib 1.2.13-3.fc38 from zlib's source rpm", p)
	}
	if comp.Name != "zlib" || comp.Repo != "https://github.com/madler/zlib" || comp.Revision != "v1.2.13" {
		t.Errorf("component %s %s @ %s; want zlib, madler/zlib, v1.2.13", comp.Name, comp.Repo, comp.Revision)
	}
}

// TestCondaInventory: a module of a conda environment is named by the
// conda-meta record (conda's PrefixRecord) whose files list it.
func TestCondaInventory(t *testing.T) {
	root := t.TempDir()
	putFile(t, root, "opt/conda/envs/ml/conda-meta/libzlib-1.2.13-hd590300_5.json", []byte(`{"name": "libzlib", "version": "1.2.13",
 "build": "hd590300_5", "channel": "https://conda.anaconda.org/conda-forge/linux-64",
 "files": ["lib/libz.so", "lib/libz.so.1", "lib/libz.so.1.2.13"]}`))
	putFile(t, root, "opt/conda/envs/ml/conda-meta/python-3.11.8-hab00c5b_0_cpython.json", []byte(`{"name": "python", "version": "3.11.8",
 "build": "hab00c5b_0_cpython", "files": ["bin/python3.11", "lib/libpython3.11.so.1.0"]}`))
	putFile(t, root, "opt/conda/envs/ml/conda-meta/history", []byte("==> 2024-03-01 <==\n"))
	mods := map[string][2]string{
		"/opt/conda/envs/ml/lib/libz.so.1.2.13": {"zlib", "v1.2.13"},
		"/opt/conda/envs/ml/bin/python3.11":     {"cpython", "v3.11.8"},
	}
	for mod, want := range mods {
		if pkg := pkgdb.NewOwners(root, []string{mod}).Of(mod); pkg == nil || pkg.Manager != "conda" {
			t.Fatalf("%s: package %+v", mod, pkg)
		}
		c := &analysis.Crash{Modules: []analysis.Module{{Path: mod}},
			Threads: []analysis.Thread{{ID: 1, Crashed: true, Frames: []analysis.Frame{{Module: mod, Function: "f"}}}}}
		comps, problems := inventory(c, &Options{Sysroot: root}, map[string][]string{})
		if len(comps) != 1 || comps[0].Name != want[0] || comps[0].Revision != want[1] || comps[0].Origin != "conda+registry" {
			t.Errorf("%s: components %+v, problems %+v; want %v from conda", mod, comps, problems, want)
		}
	}
	if pkg := pkgdb.NewOwners(root, []string{"/opt/conda/envs/ml/lib/libother.so"}).Of("/opt/conda/envs/ml/lib/libother.so"); pkg != nil {
		t.Errorf("a file no record lists: %+v", pkg)
	}
}
