package analysis_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
)

// joinSource: the main thread waits in pthread_join while a worker crashes.
// glibc's pthread_join tail-calls __pthread_clockjoin_ex; whether gdb shows
// that tail-call frame depends on how the caller's DWARF names the callee
// (a C declaration resolves, a C++ one without a linkage name does not).
const joinSource = `
#include <pthread.h>
#include <stddef.h>
static void *crash(void *arg) { (void)arg; *(volatile int *)16 = 1; return NULL; }
int main(void) {
	pthread_t t;
	pthread_create(&t, NULL, crash, NULL);
	pthread_join(t, NULL);
	return 0;
}
`

// TestOracleFreshPrograms builds small programs here, crashes them into real
// cores and compares every thread with gdb, like TestOracleGDB does for the
// checked-in corpus.
func TestOracleFreshPrograms(t *testing.T) {
	for _, tc := range []struct{ name, compiler, ext string }{
		{"join_c", "gcc", ".c"},
		{"join_cxx", "g++", ".cpp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, tc.name+tc.ext)
			if err := os.WriteFile(src, []byte(joinSource), 0o644); err != nil {
				t.Fatal(err)
			}
			bin := filepath.Join(dir, tc.name)
			if out, err := exec.Command(tc.compiler, "-O2", "-g", "-pthread", "-o", bin, src).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", tc.compiler, err, out)
			}
			core := crashIntoCore(t, dir, bin)
			want := gdbBacktrace(t, bin, core, nil)
			got, err := analysis.Open(core, analysis.Options{Exe: bin})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Threads) != len(want.Threads) || len(want.Threads) != 2 {
				t.Fatalf("%d threads, gdb shows %d (want 2)", len(got.Threads), len(want.Threads))
			}
			byLWP := map[int]analysis.Thread{}
			for _, th := range got.Threads {
				byLWP[th.ID] = th
			}
			for _, wt := range want.Threads {
				compareFrames(t, wt, byLWP[wt.LWP])
			}
		})
	}
}

// crashIntoCore runs bin in dir with cores enabled and returns the core the
// kernel wrote (core_pattern "core" in the cwd), else one gdb generates.
func crashIntoCore(t *testing.T, dir, bin string) string {
	t.Helper()
	cmd := exec.Command("bash", "-c", "ulimit -c unlimited; exec "+bin)
	cmd.Dir = dir
	cmd.Run() // it crashes
	matches, _ := filepath.Glob(filepath.Join(dir, "core*"))
	if len(matches) > 0 {
		return matches[0]
	}
	core := filepath.Join(dir, "gdb.core")
	out, err := exec.Command("gdb", "-batch", "-nx", "-ex", "run", "-ex", "generate-core-file "+core, bin).CombinedOutput()
	if _, statErr := os.Stat(core); err != nil || statErr != nil {
		t.Fatalf("no core from the kernel nor from gdb: %v\n%s", err, out)
	}
	return core
}
