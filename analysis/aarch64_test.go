package analysis_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/analysis/logs"
	"github.com/faultline-dev/faultline/internal/testgz"
)

const aarch64Corpus = "../testdata/aarch64"

// aarch64Sysroot reads testdata/aarch64/manifest.json and fails when this
// machine's cross libraries are not the ones the cores were made with.
func aarch64Sysroot(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(aarch64Corpus, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Sysroot   string
		Libraries []struct{ Path, BuildID string }
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, l := range m.Libraries {
		o, err := object.OpenObject(l.Path)
		if err != nil {
			t.Fatalf("%v (testdata/debuginfo/install.sh installs libc6-dev-arm64-cross)", err)
		}
		got := fmt.Sprintf("%x", o.BuildID())
		o.Close()
		if got != l.BuildID {
			t.Fatalf("%s has build-id %s here but %s when the cores were made: run testdata/aarch64/gen.sh", l.Path, got, l.BuildID)
		}
	}
	return m.Sysroot
}

// gdbMultiarch runs gdb-multiarch's `thread apply all bt` on a guest core.
func gdbMultiarch(t *testing.T, bin, core, sysroot string) *logs.GDBLog {
	t.Helper()
	if _, err := exec.LookPath("gdb-multiarch"); err != nil {
		t.Fatal("gdb-multiarch is required (testdata/debuginfo/install.sh installs it)")
	}
	out, err := exec.Command("gdb-multiarch", "-batch", "-nx", "-ex", "set pagination off", "-ex", "set width 0",
		"-ex", "set sysroot "+sysroot, "-ex", "thread apply all bt", bin, core).Output()
	if err != nil {
		t.Fatalf("gdb-multiarch: %v", err)
	}
	log, err := logs.ParseGDB(bytes.NewReader(out))
	if err != nil || len(log.Threads) == 0 {
		t.Fatalf("parsing gdb-multiarch output (%v):\n%s", err, out)
	}
	return log
}

func openAArch64(t *testing.T, name, sysroot string) (*analysis.Session, string, string) {
	t.Helper()
	bin, _ := filepath.Abs(filepath.Join(aarch64Corpus, "bin", name))
	core := filepath.Join(t.TempDir(), name+".core")
	testgz.Gunzip(t, filepath.Join(aarch64Corpus, "cores", name+".core.gz"), core)
	s, err := analysis.OpenSession(core, analysis.Options{Exe: bin, Sysroot: sysroot, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, bin, core
}

// TestAArch64QemuCores: cores that qemu-aarch64 wrote for cross-compiled
// programs (no NT_FILE: libraries come from link_map) unwind and symbolize
// frame for frame as gdb-multiarch shows them.
func TestAArch64QemuCores(t *testing.T) {
	sysroot := aarch64Sysroot(t)
	for _, name := range []string{"list_crash", "abort_plain"} {
		t.Run(name, func(t *testing.T) {
			s, bin, core := openAArch64(t, name, sysroot)
			c := s.Crash
			if c.Dump.Arch != "aarch64" {
				t.Errorf("arch %q, want aarch64", c.Dump.Arch)
			}
			want := gdbMultiarch(t, bin, core, sysroot)
			if len(c.Threads) != len(want.Threads) {
				t.Fatalf("%d threads, gdb-multiarch shows %d", len(c.Threads), len(want.Threads))
			}
			compareFrames(t, want.Threads[0], c.Threads[0])
			if len(c.Threads[0].Frames) < 4 {
				t.Errorf("only %d frames", len(c.Threads[0].Frames))
			}
			libs := 0
			for _, m := range c.Modules {
				if m.Symbols != "none" && (filepath.Base(m.Path) == "libc.so.6" || filepath.Base(m.Path) == "ld-linux-aarch64.so.1") {
					libs++
				}
			}
			if libs != 2 {
				t.Errorf("libc and ld.so not both found through link_map: %+v", c.Modules)
			}
		})
	}
}

// TestAArch64Instruction: the faulting load is decoded with arm64asm and its
// effective address computed from the registers, as gdb's x/i shows it.
func TestAArch64Instruction(t *testing.T) {
	sysroot := aarch64Sysroot(t)
	s, bin, core := openAArch64(t, "list_crash", sysroot)
	in := s.Crash.Instruction
	if in == nil {
		t.Fatal("no instruction")
	}
	out, err := exec.Command("gdb-multiarch", "-batch", "-nx", "-ex", "set sysroot "+sysroot, "-ex", "x/i $pc", bin, core).Output()
	if err != nil {
		t.Fatalf("gdb-multiarch: %v", err)
	}
	// gdb prints "=> 0x4006d8 <sum_list+20>:\tldr\tw4, [x2, #8]".
	i := bytes.IndexByte(out, '\t')
	if i < 0 {
		t.Fatalf("no instruction in gdb output %q", out)
	}
	gdbText := string(bytes.TrimSpace(bytes.ReplaceAll(bytes.ReplaceAll(out[i+1:], []byte("\t"), []byte(" ")), []byte(", "), []byte(","))))
	if got := string(bytes.ReplaceAll([]byte(in.Text), []byte(", "), []byte(","))); got != gdbText {
		t.Errorf("instruction %q, gdb shows %q", in.Text, gdbText)
	}
	if s.Crash.Signal == nil || s.Crash.Signal.Name != "SIGSEGV" {
		t.Errorf("signal %+v", s.Crash.Signal)
	}
	if in.EffectiveAddress != "0x8" || in.Access != "read" {
		t.Errorf("effective address %q access %q, want a read of 0x8 (x2 = 0 plus 8)", in.EffectiveAddress, in.Access)
	}
	if d := s.Disassemble(mustHex(t, in.PC), 2, 2); len(d) != 5 || d[2].Text != in.Text {
		t.Errorf("disassembly around the pc: %+v", d)
	}
}

func mustHex(t *testing.T, s string) uint64 {
	t.Helper()
	var v uint64
	if _, err := fmt.Sscanf(s, "0x%x", &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestAArch64PointerAuthentication: in the pac-ret build every saved return
// address carries a PAC, which gdb-multiarch cannot strip without the
// core's pauth masks (qemu writes none) — so the oracle is gdb on the plain
// build of the same source: faultline's frames on the signed core equal
// them. The test also checks that signed return addresses really are on
// the stack.
func TestAArch64PointerAuthentication(t *testing.T) {
	sysroot := aarch64Sysroot(t)
	plainBin, _ := filepath.Abs(filepath.Join(aarch64Corpus, "bin", "abort_plain"))
	plainCore := filepath.Join(t.TempDir(), "abort_plain.core")
	testgz.Gunzip(t, filepath.Join(aarch64Corpus, "cores", "abort_plain.core.gz"), plainCore)
	want := gdbMultiarch(t, plainBin, plainCore, sysroot)

	s, _, _ := openAArch64(t, "abort_pac", sysroot)
	th := s.Crash.Threads[0]
	if s.Crash.Signal == nil || s.Crash.Signal.Name != "SIGABRT" {
		t.Errorf("signal %+v", s.Crash.Signal)
	}
	// frames 0-2 are in libc (identical in both runs); the rest in the program.
	compareFrames(t, want.Threads[0], th)

	pcs := map[uint64]bool{}
	for _, f := range th.Frames[1:] {
		pcs[f.Addr] = true
	}
	sp := th.Frames[0].Regs["sp"]
	stack := make([]byte, 4096)
	n, _ := s.ReadMemory(sp, stack)
	signed := 0
	for i := 0; i+8 <= n; i += 8 {
		w := binary.LittleEndian.Uint64(stack[i:])
		if w>>48 != 0 && pcs[w&(1<<48-1)] {
			signed++
		}
	}
	if signed == 0 {
		t.Errorf("no return address with a pointer-authentication code on the stack: is the core from the pac-ret build?")
	}
}
