package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/logs"
)

// The testdata files are real outputs on one core of bigjob (bench/gen with
// -units 34 -types 1, run as `bigjob 0.01 8`: 8 parked workers, main in
// pthread_join, one crashing thread):
//   bigjob8.gdb.txt:      gdb -batch -nx -ex 'set pagination off' -ex 'thread apply all bt' bigjob core
//   bigjob8.eu-stack.txt: eu-stack -i -s --core=core -e bigjob   (elfutils 0.188)

func loadGDB(t *testing.T) *logs.GDBLog {
	t.Helper()
	gl, err := readGDB("testdata/bigjob8.gdb.txt")
	if err != nil {
		t.Fatal(err)
	}
	return gl
}

// crashFromGDB turns a gdb log into the crash model it describes, the
// output a faultline that agrees with gdb would print.
func crashFromGDB(gl *logs.GDBLog) *analysis.Crash {
	c := &analysis.Crash{Schema: analysis.Schema}
	for _, gt := range gl.Threads {
		th := analysis.Thread{ID: gt.LWP, Crashed: gt.Num == 1}
		if th.Crashed {
			c.CrashingThreadID = gt.LWP
		}
		for _, g := range gt.Frames {
			f := analysis.Frame{Index: g.Index, Function: g.Function, File: g.File, Line: g.Line, Signal: g.Signal}
			th.Frames = append(th.Frames, f)
		}
		c.Threads = append(c.Threads, th)
	}
	return c
}

// crashFromEUStack reads `eu-stack -i -s` output into the crash model: the
// first TID is the crashing thread (eu-stack lists the core's threads in
// NT_PRSTATUS order).
func crashFromEUStack(t *testing.T, path string) *analysis.Crash {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := &analysis.Crash{Schema: analysis.Schema}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "TID "):
			id, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(line, "TID "), ":"))
			if err != nil {
				t.Fatalf("%s: %q: %v", path, line, err)
			}
			if len(c.Threads) == 0 {
				c.CrashingThreadID = id
			}
			c.Threads = append(c.Threads, analysis.Thread{ID: id, Crashed: len(c.Threads) == 0})
		case strings.HasPrefix(line, "#"):
			// "#3  0x00007fa8cb5e5a18 big::crash_entry(unsigned char const*)"
			num, rest, _ := strings.Cut(line, " ")
			pc, fn, _ := strings.Cut(strings.TrimSpace(rest), " ")
			idx, _ := strconv.Atoi(strings.TrimPrefix(num, "#"))
			th := &c.Threads[len(c.Threads)-1]
			th.Frames = append(th.Frames, analysis.Frame{Index: idx, PC: pc, Function: strings.TrimSpace(fn)})
		case strings.HasPrefix(line, "    "):
			// "    src/unit_032.cpp:95:12" (file:line:column)
			loc := strings.Split(strings.TrimSpace(line), ":")
			fr := &c.Threads[len(c.Threads)-1].Frames[len(c.Threads[len(c.Threads)-1].Frames)-1]
			fr.File = loc[0]
			if len(loc) > 1 {
				fr.Line, _ = strconv.Atoi(loc[1])
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestGDBAgreesWithItself(t *testing.T) {
	gl := loadGDB(t)
	r := Compare(crashFromGDB(gl), gl)
	if r.Matched != 10 || r.ThreadsAgree != 10 || r.FramesAgree != r.Frames || len(r.Diffs) != 0 {
		t.Fatalf("self comparison: %+v", r)
	}
	if !r.CrashOK() || r.CrashFrames != 7 {
		t.Fatalf("crashing thread: LWP %d vs gdb %d, %d/%d frames", r.CrashLWP, r.CrashGDBLWP, r.CrashAgree, r.CrashFrames)
	}
}

func TestMissingFrameCostsOneDifference(t *testing.T) {
	gl := loadGDB(t)
	c := crashFromGDB(gl)
	var victim *analysis.Thread
	for i := range c.Threads {
		if !c.Threads[i].Crashed && len(c.Threads[i].Frames) > 6 {
			victim = &c.Threads[i]
			break
		}
	}
	if victim == nil {
		t.Fatal("no parked worker thread with > 6 frames in the gdb log")
	}
	dropped := victim.Frames[2].Function
	victim.Frames = append(victim.Frames[:2:2], victim.Frames[3:]...)
	r := Compare(c, gl)
	if len(r.Diffs) != 1 || r.FramesAgree != r.Frames-1 || r.ThreadsAgree != 9 {
		t.Fatalf("one dropped frame: %d diffs, %d/%d frames, %d threads agree", len(r.Diffs), r.FramesAgree, r.Frames, r.ThreadsAgree)
	}
	d := r.Diffs[0]
	if d.LWP != victim.ID || d.Index != 2 || d.Faultline != "(missing)" || !strings.HasPrefix(d.GDB, dropped) {
		t.Fatalf("diff %+v, want LWP %d #2 missing %s", d, victim.ID, dropped)
	}
	if !r.CrashOK() {
		t.Fatal("a difference outside the crashing thread failed the crashing thread")
	}
}

// TestPythonFramesAreNotCompared: the Python-level frames faultline
// interleaves with CPython's native ones are not differences from gdb's
// native-only backtrace.
func TestPythonFramesAreNotCompared(t *testing.T) {
	gl := loadGDB(t)
	c := crashFromGDB(gl)
	for i := range c.Threads {
		if c.Threads[i].Crashed {
			fs := c.Threads[i].Frames
			py := analysis.Frame{Function: "<module>", File: "train.py", Line: 3, Language: "python"}
			c.Threads[i].Frames = append(append(fs[:1:1], py), fs[1:]...)
		}
	}
	r := Compare(c, gl)
	if !r.CrashOK() || len(r.Diffs) != 0 || r.FramesAgree != r.Frames {
		t.Fatalf("a Python frame counted: %d diffs, %d/%d frames, crash ok %v", len(r.Diffs), r.FramesAgree, r.Frames, r.CrashOK())
	}
}

func TestCrashingThreadMismatchFails(t *testing.T) {
	gl := loadGDB(t)
	c := crashFromGDB(gl)
	for i := range c.Threads {
		if c.Threads[i].Crashed {
			c.Threads[i].Frames[0].Line++ // big::store_slot at the wrong line
		}
	}
	if r := Compare(c, gl); r.CrashOK() || r.CrashAgree != 6 {
		t.Fatalf("wrong line in frame 0: CrashOK %v, %d/%d agree", r.CrashOK(), r.CrashAgree, r.CrashFrames)
	}
	c = crashFromGDB(gl)
	c.CrashingThreadID = c.Threads[0].ID // gdb thread 10, a parked worker
	if r := Compare(c, gl); r.CrashOK() {
		t.Fatal("a different crashing LWP passed")
	}
}

func TestFilesJoinedWithCompDirAgree(t *testing.T) {
	gl := loadGDB(t)
	c := crashFromGDB(gl)
	for i := range c.Threads {
		for j := range c.Threads[i].Frames {
			f := &c.Threads[i].Frames[j]
			if f.File != "" {
				f.File = "/root/.cache/faultline-bench/corpus/" + f.File
				f.Function += "(int, long)" // a demangled symbol with its parameter list
			}
		}
	}
	if r := Compare(c, gl); len(r.Diffs) != 0 || !r.CrashOK() {
		t.Fatalf("comp_dir-joined paths: %d diffs, first %+v", len(r.Diffs), r.Diffs)
	}
}

// TestEUStackVersusGDB compares two real tools on the same core: they agree
// on every frame except two known differences, gdb's synthesized tail-call
// frame for __GI___futex_abstimed_wait_cancelable64 (it jmps to
// __futex_abstimed_wait_common; gdb rebuilds the frame from
// DW_TAG_call_site, eu-stack does not), the clone3 entry, which gdb names
// from DWARF ("clone3") and eu-stack from the symbol table ("__clone3"), and
// the main thread's frames outside main, which gdb does not show (backtrace
// past-main is off by default).
func TestEUStackVersusGDB(t *testing.T) {
	gl := loadGDB(t)
	r := Compare(crashFromEUStack(t, "testdata/bigjob8.eu-stack.txt"), gl)
	if r.Matched != 10 || len(r.OnlyGDB) != 0 || len(r.OnlyFaultline) != 0 {
		t.Fatalf("threads: %+v", r)
	}
	if r.CrashLWP != r.CrashGDBLWP || !r.CrashFound {
		t.Fatalf("crashing thread: eu-stack LWP %d, gdb LWP %d", r.CrashLWP, r.CrashGDBLWP)
	}
	tail, clone, pastMain := 0, 0, 0
	for _, d := range r.Diffs {
		switch {
		case d.Faultline == "(missing)" && strings.HasPrefix(d.GDB, "__GI___futex_abstimed_wait_cancelable64 "):
			tail++
		case d.Faultline == "(missing)" && strings.HasPrefix(d.GDB, "clone3 "),
			d.GDB == "(missing)" && strings.HasPrefix(d.Faultline, "__clone3 "):
			clone++
		case d.GDB == "(missing)" && (strings.HasPrefix(d.Faultline, "__libc_start_") || strings.HasPrefix(d.Faultline, "_start ")):
			pastMain++
		default:
			t.Errorf("unexpected difference %+v", d)
		}
	}
	// 9 threads wait on a futex (8 workers and main in pthread_join); 9 were
	// started by clone3 (all but main), each giving one frame on each side.
	if tail != 9 || clone != 18 || pastMain != 3 {
		t.Errorf("%d tail-call differences (want 9), %d clone3 differences (want 18), %d past main (want 3)", tail, clone, pastMain)
	}
	if r.CrashAgree != 6 || r.CrashFrames != 7 {
		t.Errorf("crashing thread: %d of %d agree, want 6 of 7 (clone3)", r.CrashAgree, r.CrashFrames)
	}
}

func TestNormFunc(t *testing.T) {
	for in, want := range map[string]string{
		"big::store_slot(big::Slot*, long)":            "big::store_slot",
		"big::store_slot":                              "big::store_slot",
		"(anonymous namespace)::f":                     "(anonymous namespace)::f",
		"(anonymous namespace)::f(int)":                "(anonymous namespace)::f",
		"std::less<int>::operator()":                   "std::less<int>::operator()",
		"std::less<int>::operator()(int const&) const": "std::less<int>::operator()",
		"std::terminate()":                             "std::terminate",
		"":                                             "??",
		"??":                                           "??",
	} {
		if got := normFunc(in); got != want {
			t.Errorf("normFunc(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSameFile(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"src/unit_032.cpp", "src/unit_032.cpp", true},
		{"/cache/corpus/src/unit_032.cpp", "src/unit_032.cpp", true},
		{"/build/glibc/nptl/futex-internal.c", "./nptl/futex-internal.c", true},
		{"/cache/corpus/xsrc/unit_032.cpp", "src/unit_032.cpp", false},
		{"src/unit_031.cpp", "src/unit_032.cpp", false},
		{"", "src/unit_032.cpp", false},
	} {
		if got := sameFile(c.a, c.b); got != c.want {
			t.Errorf("sameFile(%q, %q) = %v", c.a, c.b, got)
		}
	}
}
