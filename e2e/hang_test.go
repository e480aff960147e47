package e2e

import (
	"bufio"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stuckProcess starts testdata/stuck.c's program and returns it once all
// its threads wait (main in pthread_join, two in pthread_cond_wait, one in
// sleep). The test ends it.
func stuckProcess(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(program(t, "stuck.c", "-pthread"))
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ready <- sc.Scan() && sc.Text() == "ready"
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("stuck did not start")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("stuck did not say ready in 30s")
	}
	// Every thread in its blocking system call: futex (202) or
	// clock_nanosleep (230) on x86-64.
	deadline := time.Now().Add(30 * time.Second)
	for {
		blocked := 0
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/syscall", cmd.Process.Pid))
		for _, task := range tasks {
			if b, err := os.ReadFile(task); err == nil && (strings.HasPrefix(string(b), "202 ") || strings.HasPrefix(string(b), "230 ")) {
				blocked++
			}
		}
		if blocked == 4 {
			return cmd
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30s %d of 4 threads block", blocked)
		}
		time.Sleep(10 * time.Millisecond) // polling /proc: there is no event to wait on
	}
}

// gdbBacktraces runs gdb in batch mode and returns, per thread (gdb's LWP),
// the function names of `thread apply all bt`, and the shared libraries
// gdb read symbols from.
func gdbBacktraces(t *testing.T, args ...string) (map[int][]string, []string) {
	t.Helper()
	base := []string{"-batch", "-nx", "-iex", "set debuginfod enabled off", "-ex", "set width 0",
		"-ex", "info sharedlibrary", "-ex", "thread apply all bt"}
	r := command(t, invocation{timeout: 2 * time.Minute}, "gdb", append(base, args...)...)
	if r.code != 0 {
		t.Fatalf("gdb: %s", r)
	}
	threads := map[int][]string{}
	var libs []string
	lwp := 0
	threadRE := regexp.MustCompile(`^Thread \d+ \(.*?LWP (\d+)\)`)
	frameRE := regexp.MustCompile(`^#\d+\s+(?:0x[0-9a-f]+ in )?(\S+) \(`)
	libRE := regexp.MustCompile(`^0x[0-9a-f]+\s+0x[0-9a-f]+\s+Yes\s+(?:\(\*\)\s+)?(/\S+)$`)
	for _, l := range strings.Split(r.stdout, "\n") {
		if m := threadRE.FindStringSubmatch(l); m != nil {
			fmt.Sscan(m[1], &lwp)
			continue
		}
		if m := frameRE.FindStringSubmatch(l); m != nil && lwp != 0 {
			threads[lwp] = append(threads[lwp], m[1])
			continue
		}
		if m := libRE.FindStringSubmatch(l); m != nil {
			libs = append(libs, filepath.Base(m[1]))
		}
	}
	return threads, libs
}

// TestHang runs the README's `faultline hang PID` on a live, hung,
// multi-threaded program, then hands the core it wrote to gdb: gdb must
// find the shared libraries and show every thread's stack as it shows them
// attached to the live process (gdb is the oracle). The process runs on.
func TestHang(t *testing.T) {
	dir := t.TempDir()
	p := stuckProcess(t, dir)
	pid := fmt.Sprint(p.Process.Pid)
	live, liveLibs := gdbBacktraces(t, "-p", pid)

	r := example(t, "faultline hang 4242", invocation{dir: dir}, "4242", pid)
	wantExit(t, r, 0)
	wantMatch(t, "hang's stderr", r.stderr, `wrote faultline-crashes/hang-`+pid+`-\d{8}-\d{6}/core \(4 threads;`)
	wantContains(t, "hang's report", r.stdout, "threads:   4", "2 threads with this stack",
		"wait_for_work at ", "poll_forever at ", "main at ")
	cores, _ := filepath.Glob(filepath.Join(dir, "faultline-crashes", "hang-"+pid+"-*", "core"))
	if len(cores) != 1 {
		t.Fatalf("cores written: %v", cores)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(cores[0]), "report.md")); err != nil {
		t.Error("no report.md next to the core")
	}
	if err := p.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the process did not survive faultline hang: %v", err)
	}

	fromCore, coreLibs := gdbBacktraces(t, p.Path, cores[0])
	if strings.Join(coreLibs, " ") != strings.Join(liveLibs, " ") || len(coreLibs) < 2 {
		t.Errorf("gdb reads symbols of %v from the core, %v from the live process", coreLibs, liveLibs)
	}
	if len(live) != 4 || len(fromCore) != 4 {
		t.Fatalf("gdb sees %d threads live, %d in the core", len(live), len(fromCore))
	}
	for lwp, want := range live {
		if got := fromCore[lwp]; strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("thread %d: gdb on the core shows %v, on the live process %v", lwp, got, want)
		}
	}

	// The kernel's own core of the same process, unchanged since: the
	// same segments, each with the bytes the kernel chose to dump.
	p.Process.Signal(syscall.SIGABRT)
	p.Wait()
	kernel := kernelCore(t, dir)
	want, got := loadSegments(t, kernel), loadSegments(t, cores[0])
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("PT_LOAD segments (vaddr memsz filesz flags) differ from the kernel's core:\nkernel:\n%s\nfaultline hang:\n%s",
			strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
}

// kernelCore returns the core the kernel wrote into dir (core_pattern
// "core", with or without the pid).
func kernelCore(t *testing.T, dir string) string {
	t.Helper()
	pattern, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
	if strings.HasPrefix(string(pattern), "|") {
		t.Fatalf("core_pattern %q pipes cores to a program: this test compares with the kernel's core file", pattern)
	}
	for try := 0; try < 100; try++ {
		if m, _ := filepath.Glob(filepath.Join(dir, "core*")); len(m) > 0 {
			return m[0]
		}
		time.Sleep(20 * time.Millisecond) // the kernel has written it when wait returns; a slow filesystem may lag
	}
	t.Fatalf("no kernel core in %s (core_pattern %q)", dir, pattern)
	return ""
}

// loadSegments lists a core's PT_LOAD headers as "vaddr memsz filesz flags".
func loadSegments(t *testing.T, path string) []string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			out = append(out, fmt.Sprintf("%#x %#x %#x %v", p.Vaddr, p.Memsz, p.Filesz, p.Flags))
		}
	}
	return out
}
