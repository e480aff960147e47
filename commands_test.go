package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/pierrec/lz4/v4"
	"github.com/ulikunitz/xz"
)

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// faultlineBinary builds the faultline command once for the tests that
// run it as users do, as a subprocess.
func faultlineBinary(t *testing.T) string {
	t.Helper()
	binaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "faultline-bin-")
		if err != nil {
			binaryErr = err
			return
		}
		binaryPath = filepath.Join(dir, "faultline")
		out, err := exec.Command("go", "build", "-o", binaryPath, ".").CombinedOutput()
		if err != nil {
			t.Logf("go build: %s", out)
			binaryErr = err
		}
	})
	if binaryErr != nil {
		t.Fatalf("building faultline: %v", binaryErr)
	}
	return binaryPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binaryPath != "" {
		os.RemoveAll(filepath.Dir(binaryPath))
	}
	os.Exit(code)
}

// runBinary runs faultline with args and stdin, and returns stdout,
// stderr and the exit status.
func runBinary(t *testing.T, stdin []byte, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(faultlineBinary(t), args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// Every command in the table prints its own usage, flags and examples for
// --help (and for `faultline help CMD`) and exits 0.
func TestCommandHelp(t *testing.T) {
	for _, c := range commands {
		for _, args := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {"help", c.name}} {
			out, errOut, code := runBinary(t, nil, args...)
			if code != 0 || !strings.HasPrefix(out, "usage: faultline "+c.name) || errOut != "" {
				t.Errorf("faultline %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, out, errOut)
				continue
			}
			if len(c.examples) > 0 && !strings.Contains(out, "\nexamples:\n  "+c.examples[0]+"\n") {
				t.Errorf("faultline %s does not show its examples:\n%s", strings.Join(args, " "), out)
			}
		}
		if c.short == "" && c.name != "version" {
			t.Errorf("%s has no summary line", c.name)
		}
	}
	// The command list is the table: help shows every command, in order.
	out, _, code := runBinary(t, nil, "help")
	last := -1
	for _, c := range commands {
		i := strings.Index(out, "\n  faultline "+c.name)
		if code != 0 || i < last {
			t.Fatalf("help (exit %d) does not list %s in table order:\n%s", code, c.name, out)
		}
		last = i
	}
	// A usage error prints the command's usage to stderr and exits 2.
	_, errOut, code := runBinary(t, nil, "analyze", "--format", "pdf", "core")
	if code != 2 || !strings.Contains(errOut, `unknown --format "pdf"`) || !strings.Contains(errOut, "usage: faultline analyze") {
		t.Errorf("analyze --format pdf: exit %d, stderr %q", code, errOut)
	}
}

// `faultline sources` defines its flags once (it used to panic: flag
// redefined: offline).
func TestSourcesFlags(t *testing.T) {
	_, errOut, code := runBinary(t, nil, "sources", "--offline")
	if code != 2 || strings.Contains(errOut, "panic") || !strings.Contains(errOut, "expected exactly one DUMP") {
		t.Errorf("sources --offline: exit %d, stderr %q", code, errOut)
	}
}

// "-" reads the dump from standard input, compressed or not, and xz and
// lz4 cores read like gzip'd ones: one report, the dump named as given.
func TestAnalyzeStdinAndCompression(t *testing.T) {
	const exe, core = "testdata/native/bin/demo", "testdata/native/cores/demo.core.gz"
	gz, err := os.ReadFile(core)
	if err != nil {
		t.Fatal(err)
	}
	want, errOut, code := runBinary(t, nil, "analyze", "--offline", "--format", "text", "--exe", exe, core)
	if code != 0 || !strings.HasPrefix(want, "faultline: "+core+" (elf-core, x86_64)") {
		t.Fatalf("analyze %s: exit %d\n%s%s", core, code, want, errOut)
	}
	body := want[strings.Index(want, "\n"):]
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	if _, err := plain.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	var xzData bytes.Buffer
	xw, _ := xz.NewWriter(&xzData)
	xw.Write(plain.Bytes())
	xw.Close()
	var lz4Data bytes.Buffer
	lw := lz4.NewWriter(&lz4Data)
	lw.Write(plain.Bytes())
	lw.Close()
	dir := t.TempDir()
	xzPath, lz4Path := filepath.Join(dir, "demo.core.xz"), filepath.Join(dir, "demo.core.lz4")
	os.WriteFile(xzPath, xzData.Bytes(), 0o600)
	os.WriteFile(lz4Path, lz4Data.Bytes(), 0o600)
	cases := []struct {
		name  string
		stdin []byte
		dump  string
	}{
		{"gzip on stdin", gz, "-"},
		{"plain on stdin", plain.Bytes(), "-"},
		{"xz file", nil, xzPath},
		{"lz4 on stdin", lz4Data.Bytes(), "-"},
		{"lz4 file", nil, lz4Path},
	}
	for _, tc := range cases {
		got, errOut, code := runBinary(t, tc.stdin, "analyze", "--offline", "--format", "text", "--exe", exe, tc.dump)
		if code != 0 || !strings.HasPrefix(got, "faultline: "+tc.dump+" (elf-core, x86_64)\n") || got[strings.Index(got, "\n"):] != body {
			t.Errorf("%s: exit %d\n%s%s\nwant the report of %s", tc.name, code, got, errOut, core)
		}
	}
}

// --host-core joins a GPU core dump with the CPU core of the process that
// launched its kernels (analysis.OpenWithHostCore): the host threads come
// from the CPU core; a launching thread it does not have is a problem.
func TestAnalyzeHostCore(t *testing.T) {
	const gpu = "testdata/cuda/cores/illegal_address.sm_80.nvcudmp.gz"
	const exe, host = "testdata/native/bin/demo", "testdata/native/cores/demo.core.gz"
	out, errOut, code := runBinary(t, nil, "analyze", "--json", "--offline", "--exe", exe, "--host-core", host, gpu)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var c struct {
		Dump     struct{ Format string }
		GPU      *struct{ Kernel string }
		Threads  []struct{ ID int }
		Problems []struct{ Message string }
	}
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	if c.Dump.Format != "cuda-core" || c.GPU == nil || c.GPU.Kernel != "crash_kernel" || len(c.Threads) == 0 {
		t.Fatalf("host+GPU model: format %q gpu %+v, %d threads", c.Dump.Format, c.GPU, len(c.Threads))
	}
	found := false
	for _, p := range c.Problems {
		found = found || strings.Contains(p.Message, "which the CPU core does not have")
	}
	if !found {
		t.Errorf("no problem says the launching thread is missing from the demo core: %+v", c.Problems)
	}
	if _, errOut, code := runBinary(t, nil, "analyze", "--host-core", host, gpu, gpu); code != 2 || !strings.Contains(errOut, "--host-core goes with one GPU core dump") {
		t.Errorf("--host-core with two dumps: exit %d, %s", code, errOut)
	}
}
