package input

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/faultline-dev/faultline/internal/boundtest"
)

func TestMain(m *testing.M) { os.Exit(boundtest.Main(m)) }

// Compressed-core bombs and damage (issue 18 item 6), on the real binary
// with TMPDIR a fresh directory.

// zstdOf writes prefix then n zero bytes, zstd-compressed, to path.
func zstdOf(t *testing.T, path string, prefix []byte, n int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := zstd.NewWriter(f, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	zw.Write(prefix)
	io.CopyN(zw, zeroReader{}, n)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestBoundZstdBombRefusedByMagic(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	bomb := filepath.Join(dir, "core.zst")
	zstdOf(t, bomb, nil, 1<<30) // 1 GiB of zeros
	r := boundtest.Run(t, boundtest.Cmd{Args: []string{"analyze", bomb}, Env: []string{"TMPDIR=" + tmp}, Limits: boundtest.Limits{Wall: 60 * time.Second}})
	if r.Exit == 0 || !strings.Contains(r.Stderr, "does not decompress to an ELF core or a text log") {
		t.Errorf("want the bomb refused by its first bytes: %v\n%s", r, r.Stderr)
	}
	if r.CPUTime > 2*time.Second || boundtest.DirBytes(tmp) != 0 {
		t.Errorf("bound: cpu <= 2 s, nothing left in TMPDIR; got %v, %d bytes", r, boundtest.DirBytes(tmp))
	}
}

func TestBoundDecompressedCap(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	core := filepath.Join(dir, "core.zst")
	zstdOf(t, core, []byte("\x7fELF\x02\x01\x01"), 256<<20)
	r := boundtest.Run(t, boundtest.Cmd{Args: []string{"analyze", "--max-decompressed", "1000000", core}, Env: []string{"TMPDIR=" + tmp},
		Limits: boundtest.Limits{Wall: 60 * time.Second}})
	if r.Exit == 0 || !strings.Contains(r.Stderr, "inflates past 1000000 bytes") {
		t.Errorf("want the 1 MB cap enforced: %v\n%s", r, r.Stderr)
	}
	if r.CPUTime > 2*time.Second || boundtest.DirBytes(tmp) != 0 {
		t.Errorf("bound: cpu <= 2 s, nothing left in TMPDIR; got %v, %d bytes", r, boundtest.DirBytes(tmp))
	}
}

// TestSignalLeavesNoTempFile: SIGTERM (then SIGINT, SIGHUP) while a 2 GiB
// core decompresses leaves nothing in TMPDIR (the file is unlinked as it
// is created).
func TestSignalLeavesNoTempFile(t *testing.T) {
	dir := t.TempDir()
	core := filepath.Join(dir, "core.zst")
	zstdOf(t, core, []byte("\x7fELF\x02\x01\x01"), 2<<30)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		tmp := t.TempDir()
		cmd := exec.Command(boundtest.Binary(t), "analyze", core)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		cmd.Process.Signal(sig)
		cmd.Wait()
		if n := boundtest.DirBytes(tmp); n != 0 {
			t.Errorf("%v: %d bytes left in TMPDIR", sig, n)
		}
	}
}

// TestTruncatedGzipCoreIsPartial: the demo core, gzip'd and cut at 60 %,
// gives the partial result of a truncated plain core, with a problem.
func TestTruncatedGzipCoreIsPartial(t *testing.T) {
	gz, err := os.ReadFile("../../testdata/native/cores/demo.core.gz")
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	dir := t.TempDir()
	cut := filepath.Join(dir, "demo.core.gz")
	os.WriteFile(cut, gz[:len(gz)*6/10], 0o644)
	plainCut := filepath.Join(dir, "demo.core")
	os.WriteFile(plainCut, plain[:len(plain)/2], 0o644)
	for _, p := range []string{cut, plainCut} {
		r := boundtest.Run(t, boundtest.Cmd{Args: []string{"analyze", "--json", "--offline", "--exe", "../../testdata/native/bin/demo", p}})
		if r.Exit != 0 {
			t.Fatalf("%s: %v\n%s", p, r, r.Stderr)
		}
		c := boundtest.Crash(t, r)
		if len(c.Threads) == 0 || !boundtest.HasProblem(c, "truncated") {
			t.Errorf("%s: want the threads and a problem saying the core is truncated: %d threads, %v", p, len(c.Threads), c.Problems)
		}
	}
}
