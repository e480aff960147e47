package symbolize

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/boundtest"
)

// .gnu_debuglink traversal (issue 18 item 3): the bundled demo program,
// stripped, with a crafted debuglink, analyzed with its core by the real
// binary.

// linkedDemo writes the stripped demo program into a directory three levels
// below a fresh temp dir, with a .gnu_debuglink naming link, and returns
// its path and the temp dir.
func linkedDemo(t *testing.T, link string) (exe, root string) {
	t.Helper()
	root = t.TempDir()
	dir := filepath.Join(root, "a", "b", "c")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sec := append([]byte(link), 0)
	for len(sec)%4 != 0 {
		sec = append(sec, 0)
	}
	sec = binary.LittleEndian.AppendUint32(sec, crc32.ChecksumIEEE([]byte("the debug file that is not there")))
	secFile := filepath.Join(root, "debuglink.bin")
	if err := os.WriteFile(secFile, sec, 0o644); err != nil {
		t.Fatal(err)
	}
	exe = filepath.Join(dir, "demo")
	out, err := exec.Command("objcopy", "--strip-debug", "--remove-section=.gnu_debuglink",
		"--add-section", ".gnu_debuglink="+secFile, "--set-section-flags", ".gnu_debuglink=readonly",
		"../../../testdata/native/bin/demo", exe).CombinedOutput()
	if err != nil {
		t.Fatalf("objcopy: %v\n%s", err, out)
	}
	return exe, root
}

func analyzeDemo(t *testing.T, exe string) (boundtest.Result, []string) {
	t.Helper()
	r := boundtest.Run(t, boundtest.Cmd{Args: []string{"analyze", "--json", "--offline", "--exe", exe,
		"../../../testdata/native/cores/demo.core.gz"}, Limits: boundtest.Limits{Wall: 30 * time.Second, RSSKiB: 1 << 20}})
	if r.Killed != "" || r.Exit != 0 {
		t.Fatalf("%v\n%s", r, r.Stderr)
	}
	var msgs []string
	for _, p := range boundtest.Crash(t, r).Problems {
		msgs = append(msgs, p.Message)
	}
	return r, msgs
}

func TestBoundDebuglinkTraversal(t *testing.T) {
	for _, link := range []string{"../../../../../../../../../../proc/self/pagemap", "../../../secret.debug"} {
		t.Run(filepath.Base(link), func(t *testing.T) {
			exe, root := linkedDemo(t, link)
			if err := os.WriteFile(filepath.Join(root, "secret.debug"), []byte("secret"), 0o600); err != nil {
				t.Fatal(err)
			}
			r, problems := analyzeDemo(t, exe)
			joined := strings.Join(problems, "\n")
			if !strings.Contains(joined, "is not a file name; ignored") || strings.Contains(joined, "CRC32") {
				t.Errorf("want the debuglink refused by name, no file checksummed; problems:\n%s", joined)
			}
			if r.CPUTime > 10*time.Second {
				t.Errorf("bound: cpu <= 10 s; got %v", r)
			}
		})
	}
}

// TestBoundDebuglinkEndlessFile: a debuglink base name that is a symlink to
// a file reading as regular but without end is checksummed over the size
// it reports (0 bytes), not read forever.
func TestBoundDebuglinkEndlessFile(t *testing.T) {
	exe, _ := linkedDemo(t, "demo.debug")
	if err := os.Symlink("/proc/self/pagemap", filepath.Join(filepath.Dir(exe), "demo.debug")); err != nil {
		t.Fatal(err)
	}
	r, problems := analyzeDemo(t, exe)
	if joined := strings.Join(problems, "\n"); !strings.Contains(joined, "demo.debug: CRC32 00000000 does not match") {
		t.Errorf("want the link checksummed as empty and refused; problems:\n%s", joined)
	}
	if r.CPUTime > 10*time.Second || r.MaxRSSKiB > 200<<10 {
		t.Errorf("bound: cpu <= 10 s, maxrss <= 200 MiB; got %v", r)
	}
}
func TestMain(m *testing.M) { os.Exit(boundtest.Main(m)) }
