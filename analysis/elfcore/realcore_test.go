package elfcore

import (
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/hex"
	"github.com/faultline-dev/faultline/internal/boundtest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// faultAddr is FAULT_ADDR in testdata/crash3.c.
const faultAddr = 0xdead0

// crashCore is a core of testdata/crash3.c produced by the kernel.
type crashCore struct {
	dir, exe, core string
	gdb            string // output of gdbCommands on the core
}

var (
	crashOnce sync.Once
	crash     *crashCore
	crashErr  string
)

var gdbCommands = []string{
	"info threads",
	"thread apply all info registers rip rsp",
	"print/x $_siginfo._sifields._sigfault.si_addr",
	"x/gx &faultline_marker",
	"info proc mappings",
	"info auxv",
}

// realCore compiles testdata/crash3.c, runs it with core dumps enabled and
// returns the core (shared by all tests in the package). It skips the test
// when gcc or gdb is missing.
func realCore(t *testing.T) *crashCore {
	t.Helper()
	crashOnce.Do(func() { crash, crashErr = makeCore() })
	if crash == nil {
		t.Skip(crashErr)
	}
	return crash
}

func makeCore() (*crashCore, string) {
	for _, tool := range []string{"gcc", "gdb", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, tool + " not found"
		}
	}
	dir, err := os.MkdirTemp("", "elfcore-test-")
	if err != nil {
		return nil, err.Error()
	}
	src, _ := filepath.Abs("testdata/crash3.c")
	exe := filepath.Join(dir, "crash3")
	if out, err := exec.Command("gcc", "-g", "-O0", "-pthread", "-o", exe, src).CombinedOutput(); err != nil {
		return nil, "gcc: " + err.Error() + "\n" + string(out)
	}
	cmd := exec.Command("bash", "-c", "ulimit -c unlimited; exec ./crash3")
	cmd.Dir = dir
	cmd.Run() // dies with SIGSEGV
	core := ""
	if m, _ := filepath.Glob(filepath.Join(dir, "core*")); len(m) > 0 {
		core = m[0]
	} else {
		// core_pattern pipes cores elsewhere: let gdb write one.
		core = filepath.Join(dir, "core")
		exec.Command("gdb", "-batch", "-ex", "run", "-ex", "generate-core-file "+core, exe).Run()
		if _, err := os.Stat(core); err != nil {
			return nil, "could not produce a core dump"
		}
	}
	args := []string{"-batch", "-nx"}
	for _, c := range gdbCommands {
		args = append(args, "-ex", "echo @@@ "+c+"\\n", "-ex", c)
	}
	args = append(args, exe, core)
	out, _ := exec.Command("gdb", args...).CombinedOutput()
	return &crashCore{dir: dir, exe: exe, core: core, gdb: string(out)}, ""
}

// gdbSection returns the output of one of gdbCommands.
func (c *crashCore) gdbSection(cmd string) string {
	_, after, ok := strings.Cut(c.gdb, "@@@ "+cmd+"\n")
	if !ok {
		return ""
	}
	before, _, _ := strings.Cut(after, "@@@ ")
	return before
}

func TestMain(m *testing.M) {
	code := m.Run()
	if crash != nil {
		os.RemoveAll(crash.dir)
	}
	boundtest.Cleanup()
	os.Exit(code)
}

func openCore(t *testing.T, path string) *Core {
	t.Helper()
	c, err := Open(path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func parseHex(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return v
}

func TestRealCoreThreadsMatchGDB(t *testing.T) {
	rc := realCore(t)
	c := openCore(t, rc.core)
	if c.Machine != elf.EM_X86_64 {
		t.Fatalf("Machine = %v", c.Machine)
	}
	for _, p := range c.Problems {
		t.Errorf("unexpected problem: %v", p)
	}
	// gdb: "* 1    Thread 0x7f.. (LWP 9094) crash_thread ..." - thread 1 is
	// the first NT_PRSTATUS, the one that took the signal.
	lwpRe := regexp.MustCompile(`(?m)^(\*| ) +(\d+) +Thread 0x[0-9a-f]+ \(LWP (\d+)\)`)
	var gdbLWPs []int
	current := 0
	for _, m := range lwpRe.FindAllStringSubmatch(rc.gdbSection("info threads"), -1) {
		lwp, _ := strconv.Atoi(m[3])
		gdbLWPs = append(gdbLWPs, lwp)
		if m[1] == "*" {
			current = lwp
		}
	}
	if len(gdbLWPs) != 3 {
		t.Fatalf("gdb listed %d threads, want 3:\n%s", len(gdbLWPs), rc.gdb)
	}
	var lwps []int
	for _, th := range c.Threads {
		lwps = append(lwps, th.LWP)
	}
	if !reflect.DeepEqual(lwps, gdbLWPs) {
		t.Errorf("LWPs = %v, gdb says %v", lwps, gdbLWPs)
	}
	if c.Threads[0].LWP != current {
		t.Errorf("first thread %d, gdb's current thread %d", c.Threads[0].LWP, current)
	}
	if c.Threads[0].Signal != 11 {
		t.Errorf("Threads[0].Signal = %d, want 11", c.Threads[0].Signal)
	}

	// gdb: "Thread 3 (Thread 0x.. (LWP 9093)):" then "rip 0x.. " / "rsp 0x.. ".
	regRe := regexp.MustCompile(`(?m)^Thread \d+ \(Thread 0x[0-9a-f]+ \(LWP (\d+)\)\):\nrip +(0x[0-9a-f]+).*\nrsp +(0x[0-9a-f]+)`)
	ms := regRe.FindAllStringSubmatch(rc.gdbSection("thread apply all info registers rip rsp"), -1)
	if len(ms) != 3 {
		t.Fatalf("found %d register blocks in gdb output:\n%s", len(ms), rc.gdb)
	}
	for _, m := range ms {
		lwp, _ := strconv.Atoi(m[1])
		rip, rsp := parseHex(t, m[2]), parseHex(t, m[3])
		found := false
		for i := range c.Threads {
			th := &c.Threads[i]
			if th.LWP != lwp {
				continue
			}
			found = true
			r, ok := th.X86_64()
			if !ok {
				t.Fatalf("thread %d: no x86-64 registers", lwp)
			}
			if r.Rip != rip || r.Rsp != rsp || th.PC() != rip || th.SP() != rsp {
				t.Errorf("thread %d: rip %#x rsp %#x, gdb says rip %#x rsp %#x", lwp, r.Rip, r.Rsp, rip, rsp)
			}
			if len(th.FPRegs) != 512 {
				t.Errorf("thread %d: NT_PRFPREG %d bytes, want 512 (FXSAVE area)", lwp, len(th.FPRegs))
			}
			if len(th.XState) < 576 {
				t.Errorf("thread %d: NT_X86_XSTATE %d bytes, want at least the 576-byte legacy+header area", lwp, len(th.XState))
			}
		}
		if !found {
			t.Errorf("gdb thread LWP %d not in core", lwp)
		}
	}
}

func TestRealCoreSignalAndProcess(t *testing.T) {
	rc := realCore(t)
	c := openCore(t, rc.core)
	m := regexp.MustCompile(`\$1 = (0x[0-9a-f]+)`).FindStringSubmatch(rc.gdbSection("print/x $_siginfo._sifields._sigfault.si_addr"))
	if m == nil {
		t.Fatalf("no si_addr in gdb output:\n%s", rc.gdb)
	}
	if got := parseHex(t, m[1]); got != faultAddr {
		t.Fatalf("gdb si_addr %#x, program used %#x", got, faultAddr)
	}
	s := c.Signal
	if s == nil {
		t.Fatal("no NT_SIGINFO")
	}
	if s.Signo != 11 || s.Code != 1 /* SEGV_MAPERR */ || s.Addr != faultAddr || s.FromUser() {
		t.Errorf("Signal = %+v, want SIGSEGV SEGV_MAPERR at %#x", *s, faultAddr)
	}
	if c.Threads[0].SigInfo != s {
		t.Errorf("the crashing thread does not carry the NT_SIGINFO")
	}
	p := c.Process
	if p == nil {
		t.Fatal("no NT_PRPSINFO")
	}
	if p.Fname != "crash3" || p.Args != "./crash3" {
		t.Errorf("Fname %q Args %q, want crash3, ./crash3", p.Fname, p.Args)
	}
	// The process id is the main thread's LWP (gdb's last-listed thread is
	// the main thread here; check it is one of them and equals PGRP/PID of
	// the threads' NT_PRSTATUS).
	main := -1
	for _, th := range c.Threads {
		if th.LWP == p.PID {
			main = th.LWP
		}
		if th.PGRP != p.PGRP || th.SID != p.SID || th.PPID != p.PPID {
			t.Errorf("thread %d pgrp/sid/ppid %d/%d/%d differ from prpsinfo %d/%d/%d", th.LWP, th.PGRP, th.SID, th.PPID, p.PGRP, p.SID, p.PPID)
		}
	}
	if main < 0 {
		t.Errorf("PID %d is not one of the thread LWPs", p.PID)
	}
	if p.UID != uint32(os.Getuid()) || p.GID != uint32(os.Getgid()) {
		t.Errorf("UID/GID %d/%d, want %d/%d", p.UID, p.GID, os.Getuid(), os.Getgid())
	}
	if pg, ok := c.AuxVal(AT_PAGESZ); !ok || pg != uint64(os.Getpagesize()) {
		t.Errorf("AT_PAGESZ = %d, %v", pg, ok)
	}
}

func TestRealCoreAuxvMatchesGDB(t *testing.T) {
	rc := realCore(t)
	c := openCore(t, rc.core)
	// gdb: "31   AT_EXECFN            File name of executable        0x7ffc58009fef "./crash3""
	re := regexp.MustCompile(`(?m)^(\d+)\s.*?\s(0x[0-9a-f]+|\d+)(?: "(.*)")?$`)
	var want []AuxEntry
	execfn := ""
	for _, m := range re.FindAllStringSubmatch(rc.gdbSection("info auxv"), -1) {
		typ, _ := strconv.ParseUint(m[1], 10, 64)
		val, err := strconv.ParseUint(m[2], 0, 64)
		if err != nil {
			t.Fatalf("bad gdb auxv value %q", m[2])
		}
		if typ == AT_EXECFN {
			execfn = m[3]
		}
		if typ != 0 {
			want = append(want, AuxEntry{typ, val})
		}
	}
	if len(want) < 10 || execfn == "" {
		t.Fatalf("gdb listed %d auxv entries, AT_EXECFN %q:\n%s", len(want), execfn, rc.gdb)
	}
	if !reflect.DeepEqual(c.Auxv, want) {
		t.Errorf("Auxv =\n%v\ngdb says\n%v", c.Auxv, want)
	}
	if got := c.ExecFn(); got != execfn {
		t.Errorf("ExecFn() = %q, gdb says %q", got, execfn)
	}
}

func TestRealCoreMappingsMatchGDB(t *testing.T) {
	rc := realCore(t)
	c := openCore(t, rc.core)
	// gdb: "      0x55aa4e5e1000     0x55aa4e5e2000     0x1000        0x0 /tmp/cc/crash3"
	re := regexp.MustCompile(`(?m)^\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)\s+(\S.*)$`)
	var want []MappedFile
	for _, m := range re.FindAllStringSubmatch(rc.gdbSection("info proc mappings"), -1) {
		want = append(want, MappedFile{Start: parseHex(t, m[1]), End: parseHex(t, m[2]), FileOffset: parseHex(t, m[3]), Path: m[4]})
	}
	if len(want) < 5 {
		t.Fatalf("gdb listed %d mappings:\n%s", len(want), rc.gdb)
	}
	if !reflect.DeepEqual(c.Files, want) {
		t.Errorf("Files =\n%v\ngdb says\n%v", c.Files, want)
	}
	exe, _ := filepath.EvalSymlinks(rc.exe)
	if f := c.FileAt(want[0].Start + 1); f == nil || f.Path != want[0].Path {
		t.Errorf("FileAt(%#x) = %v", want[0].Start+1, f)
	}
	if want[0].Path != exe {
		t.Errorf("first mapping %s, want the executable %s", want[0].Path, exe)
	}
}

func TestRealCoreReadMemory(t *testing.T) {
	rc := realCore(t)
	c := openCore(t, rc.core)
	// gdb: "0x55aa4e5e5038 <faultline_marker>:	0x1122334455667788"
	m := regexp.MustCompile(`(0x[0-9a-f]+) <faultline_marker>:\s+(0x[0-9a-f]+)`).FindStringSubmatch(rc.gdbSection("x/gx &faultline_marker"))
	if m == nil {
		t.Fatalf("no x/gx output from gdb:\n%s", rc.gdb)
	}
	addr, val := parseHex(t, m[1]), parseHex(t, m[2])
	if val != 0x1122334455667788 {
		t.Fatalf("gdb read %#x", val)
	}
	// The same address from nm and the PIE bias (the executable's mapping
	// at file offset 0 in NT_FILE).
	out, err := exec.Command("nm", rc.exe).Output()
	if err == nil {
		sm := regexp.MustCompile(`(?m)^([0-9a-f]+) [A-Za-z] faultline_marker$`).FindStringSubmatch(string(out))
		if sm == nil {
			t.Fatalf("faultline_marker not in nm output")
		}
		if got := c.Files[0].Start + parseHex(t, sm[1]); got != addr {
			t.Errorf("nm+bias gives %#x, gdb %#x", got, addr)
		}
	}
	var buf [8]byte
	n, err := c.ReadMemory(addr, buf[:])
	if n != 8 || err != nil {
		t.Fatalf("ReadMemory = %d, %v", n, err)
	}
	if got := c.ByteOrder.Uint64(buf[:]); got != val {
		t.Errorf("ReadMemory read %#x, gdb %#x", got, val)
	}
	b, err := c.Slice(addr, 8)
	if err != nil || !bytes.Equal(b, buf[:]) {
		t.Errorf("Slice = %x, %v", b, err)
	}

	// The fault address is not mapped.
	if n, err := c.ReadMemory(faultAddr, buf[:]); n != 0 {
		t.Errorf("ReadMemory(fault address) = %d bytes", n)
	} else if me, ok := err.(*MemoryError); !ok || me.Addr != faultAddr || me.NotDumped {
		t.Errorf("ReadMemory(fault address) error %v", err)
	}
	// The executable's text is in a segment but not dumped (filesz 0).
	for _, s := range c.Segments {
		if s.Filesz == 0 && s.Memsz > 0 {
			n, err := c.ReadMemory(s.Vaddr, buf[:])
			if me, ok := err.(*MemoryError); n != 0 || !ok || !me.NotDumped || me.Addr != s.Vaddr {
				t.Errorf("ReadMemory(undumped %#x) = %d, %v", s.Vaddr, n, err)
			}
			break
		}
	}
	// A read across two adjacent dumped segments.
	spanned := false
	for i := 0; i+1 < len(c.Segments); i++ {
		a, b := c.Segments[i], c.Segments[i+1]
		if a.End() == b.Vaddr && a.Filesz == a.Memsz && b.Filesz >= 8 {
			p := make([]byte, 16)
			if n, err := c.ReadMemory(a.End()-8, p); n != 16 || err != nil {
				t.Fatalf("spanning read = %d, %v", n, err)
			}
			if !bytes.Equal(p[:8], c.data[a.Offset+a.Filesz-8:a.Offset+a.Filesz]) || !bytes.Equal(p[8:], c.data[b.Offset:b.Offset+8]) {
				t.Errorf("spanning read returned the wrong bytes")
			}
			s, err := c.Slice(a.End()-8, 16)
			if err != nil || !bytes.Equal(s, p) {
				t.Errorf("spanning Slice = %x, %v", s, err)
			}
			spanned = true
			break
		}
	}
	if !spanned {
		t.Errorf("no two adjacent dumped segments to read across")
	}
}

// readelfBuildID returns the build-id readelf -n prints for path.
func readelfBuildID(t *testing.T, path string) []byte {
	t.Helper()
	out, err := exec.Command("readelf", "-n", path).Output()
	if err != nil {
		t.Skipf("readelf: %v", err)
	}
	m := regexp.MustCompile(`Build ID: ([0-9a-f]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no build-id in readelf -n %s", path)
	}
	id, _ := hex.DecodeString(string(m[1]))
	return id
}

func TestRealCoreBuildID(t *testing.T) {
	rc := realCore(t)
	c := openCore(t, rc.core)
	checked := 0
	seen := map[string]bool{}
	for _, f := range c.Files {
		if f.FileOffset != 0 || seen[f.Path] {
			continue
		}
		seen[f.Path] = true
		want := readelfBuildID(t, f.Path)
		got := c.BuildIDAt(f.Start)
		if !bytes.Equal(got, want) {
			t.Errorf("BuildIDAt(%#x) for %s = %x, readelf says %x", f.Start, f.Path, got, want)
		}
		checked++
	}
	if checked < 3 { // crash3, libc, ld.so
		t.Errorf("checked %d modules", checked)
	}
	if id := c.BuildIDAt(faultAddr); id != nil {
		t.Errorf("BuildIDAt(unmapped) = %x", id)
	}
}

// compressCore writes a compressed copy of the core with the given writer.
func compressCore(t *testing.T, src, dst string, wrap func(*os.File) (interface {
	Write([]byte) (int, error)
	Close() error
}, error)) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := wrap(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRealCoreCompressed(t *testing.T) {
	rc := realCore(t)
	plain := openCore(t, rc.core)
	dir := t.TempDir()
	type writer = interface {
		Write([]byte) (int, error)
		Close() error
	}
	cases := map[string]func(*os.File) (writer, error){
		"core.gz":  func(f *os.File) (writer, error) { return gzip.NewWriter(f), nil },
		"core.zst": func(f *os.File) (writer, error) { return zstd.NewWriter(f) },
	}
	for name, wrap := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			compressCore(t, rc.core, path, wrap)
			before, _ := filepath.Glob(filepath.Join(os.TempDir(), "faultline-core-*"))
			c, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if c.Path != path {
				t.Errorf("Path = %s", c.Path)
			}
			for _, cmp := range []struct {
				name string
				a, b any
			}{
				{"Threads", c.Threads, plain.Threads},
				{"Process", c.Process, plain.Process},
				{"Signal", c.Signal, plain.Signal},
				{"Auxv", c.Auxv, plain.Auxv},
				{"Files", c.Files, plain.Files},
				{"Segments", c.Segments, plain.Segments},
				{"Problems", c.Problems, plain.Problems},
			} {
				if !reflect.DeepEqual(cmp.a, cmp.b) {
					t.Errorf("%s differ from the uncompressed core", cmp.name)
				}
			}
			if !bytes.Equal(c.data, plain.data) {
				t.Errorf("decompressed bytes differ")
			}
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if n, err := c.ReadMemory(c.Segments[0].Vaddr, make([]byte, 8)); n != 0 || err != ErrClosed {
				t.Errorf("ReadMemory after Close = %d, %v", n, err)
			}
			after, _ := filepath.Glob(filepath.Join(os.TempDir(), "faultline-core-*"))
			if len(after) > len(before) {
				t.Errorf("temporary file left behind: %v", after)
			}
		})
	}
}
