package symbolize

import (
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/internal/boundtest"
)

// Issue 18 item 9: what the real binary says about broken debug files.

func demoProblems(t *testing.T, args ...string) string {
	t.Helper()
	args = append(append([]string{"analyze", "--json", "--offline"}, args...), "../../../testdata/native/cores/demo.core.gz")
	r := boundtest.Run(t, boundtest.Cmd{Args: args, Limits: boundtest.Limits{Wall: 30 * time.Second}})
	if r.Exit != 0 || r.Killed != "" {
		t.Fatalf("%v\n%s", r, r.Stderr)
	}
	var msgs []string
	for _, p := range boundtest.Crash(t, r).Problems {
		msgs = append(msgs, p.Message)
	}
	return strings.Join(msgs, "\n")
}

// TestCorruptDebugInfoNamed: the demo program with its first .debug_info
// unit's length pointing past the section is reported as corrupt at that
// offset, not as missing debug info to install.
func TestCorruptDebugInfoNamed(t *testing.T) {
	data, err := os.ReadFile("../../../testdata/native/bin/demo")
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.Open("../../../testdata/native/bin/demo")
	if err != nil {
		t.Fatal(err)
	}
	sec := ef.Section(".debug_info")
	ef.Close()
	binary.LittleEndian.PutUint32(data[sec.Offset:], 0x7fffff00) // unit_length
	exe := filepath.Join(t.TempDir(), "demo")
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	problems := demoProblems(t, "--exe", exe)
	if !strings.Contains(problems, "corrupt debug info") || !strings.Contains(problems, ".debug_info: offset 0x0: unit runs past the section") ||
		strings.Contains(problems, "install") {
		t.Errorf("want the debug info named corrupt at offset 0x0 and no install hint:\n%s", problems)
	}
}

// TestBuildIDSymlinkNamedNotRead: a .build-id link in a debug directory
// pointing at an unrelated text file is reported by name (and target),
// without any of the file's bytes.
func TestBuildIDSymlinkNamedNotRead(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "demo")
	if out, err := exec.Command("objcopy", "--strip-debug", "../../../testdata/native/bin/demo", exe).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, out)
	}
	o, err := object.OpenObject(exe)
	if err != nil {
		t.Fatal(err)
	}
	id := hex.EncodeToString(o.BuildID())
	o.Close()
	secret := filepath.Join(dir, "passwd")
	if err := os.WriteFile(secret, []byte("root:x:0:0:SECRET-CONTENT:/root:/bin/bash\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "debug", ".build-id", id[:2], id[2:]+".debug")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	problems := demoProblems(t, "--exe", exe, "--debug-dir", filepath.Join(dir, "debug"))
	if !strings.Contains(problems, "not an ELF file (bad magic) (a symlink to "+secret+")") {
		t.Errorf("the link is not named with its target:\n%s", problems)
	}
	for _, leak := range []string{"SECRET", "root:", "[114 111 111 116]"} {
		if strings.Contains(problems, leak) {
			t.Errorf("the problems quote the linked file (%q):\n%s", leak, problems)
		}
	}
}
