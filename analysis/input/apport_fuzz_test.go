package input

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"io"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// FuzzReadApport reads mutated apport reports: whatever the bytes,
// readApport returns a report or an error within the budget (the core it
// writes capped by MaxPlainBytes, lowered here), and never panics.
func FuzzReadApport(f *testing.F) {
	var core bytes.Buffer
	zw := gzip.NewWriter(&core)
	zw.Write([]byte("\x7fELF\x02\x01\x01" + strings.Repeat("\x00core", 300)))
	zw.Close()
	b64 := base64.StdEncoding.EncodeToString(core.Bytes())
	f.Add([]byte("ProblemType: Crash\nExecutablePath: /usr/bin/x\nPackage: x 1.0 [origin: PPA]\n" +
		"Dependencies:\n libc6 2.36-9 [modified: /etc/ld.so.conf]\n zlib1g 1:1.2.13\nCoreDump: base64\n " +
		b64[:40] + "\n " + b64[40:] + "\n"))
	f.Add([]byte("ProblemType: Crash\nCoreDump: base64\n H4sICAAAAAAC/0NvcmVEdW1wAA==\n !!!\n"))
	f.Add([]byte("ProblemType: Crash\nProcMaps:\n 00400000-0041f000 r--p 00000000 fe:00 1 /usr/bin/x\nStacktrace: base64\n eJw=\n"))
	old := MaxPlainBytes
	MaxPlainBytes = 4 << 20
	defer func() { MaxPlainBytes = old }()
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzbudget.Check(t, len(data), fuzzbudget.Default, func() {
			rep, _, err := readApport(bytes.NewReader(data), io.Discard)
			if err == nil && rep == nil {
				t.Fatal("no report and no error")
			}
			if err != nil && err.Error() == "" {
				t.Fatal("an error with no message")
			}
		})
	})
}

// TestApportPackages: apport's Package and Dependencies lines, with the
// suffixes apport's _customized_package_suffix writes.
func TestApportPackages(t *testing.T) {
	rep := apportReport(map[string]string{
		"Package":       "foo 1.2-3ubuntu1 [modified: usr/bin/foo etc/foo.conf] [origin: LP-PPA-someone]",
		"SourcePackage": "foo-src", "PackageArchitecture": "amd64",
		"Dependencies":   "libc6 2.35-0ubuntu3.8\nlibgcc-s1 12.3.0-1ubuntu1~22.04 [origin: unknown]\nbar (not installed)",
		"ExecutablePath": "/usr/bin/foo", "ProcCmdline": "foo --bar",
	})
	if rep.Executable != "/usr/bin/foo" || rep.Command != "foo --bar" || len(rep.Packages) != 4 {
		t.Fatalf("report %+v", rep)
	}
	p := rep.Packages[0]
	if p.Name != "foo" || p.Version != "1.2-3ubuntu1" || !p.Program || p.Source != "foo-src" || p.Arch != "amd64" ||
		p.Archive != "LP-PPA-someone" || strings.Join(p.Modified, ",") != "usr/bin/foo,etc/foo.conf" || p.Origin != "apport" {
		t.Errorf("Package %+v", p)
	}
	if d := rep.Packages[2]; d.Name != "libgcc-s1" || d.Version != "12.3.0-1ubuntu1~22.04" || d.Archive != "unknown" || d.Program {
		t.Errorf("dependency %+v", d)
	}
	if d := rep.Packages[3]; d.Name != "bar" || d.Version != "" {
		t.Errorf("not installed %+v", d)
	}
}
