package logs

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The corpus in testdata/native holds real gdb 13 output for real cores
// (see its gen.sh). Expected values here come from the crash programs'
// sources: functions, files, and lines found by searching the source for the
// statement each frame is on.

const corpusDir = "../../testdata/native"

type corpusCase struct {
	Name      string   `json:"name"`
	Binary    string   `json:"binary"`
	GDB       string   `json:"gdb"`
	GDBViews  []string `json:"gdbViews"`
	Signal    string   `json:"signal"`
	Sources   []string `json:"sources"`
	SearchDir []string `json:"searchDirs"`
}

func loadManifest(t *testing.T) []corpusCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpusDir, "manifest.json"))
	if err != nil {
		t.Fatalf("corpus manifest: %v", err)
	}
	var m struct {
		Cases []corpusCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("corpus manifest: %v", err)
	}
	return m.Cases
}

func parseCorpusFile(t *testing.T, rel string) *GDBLog {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	log, err := ParseGDB(f)
	if err != nil {
		t.Fatalf("ParseGDB(%s): %v", rel, err)
	}
	return log
}

// sourceLine returns the 1-based line of source file name (in the corpus)
// that contains marker; it must occur exactly once.
func sourceLine(t *testing.T, name, marker string) int {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	found := 0
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		if strings.Contains(sc.Text(), marker) {
			if found != 0 {
				t.Fatalf("%s: %q occurs on lines %d and %d", name, marker, found, n)
			}
			found = n
		}
	}
	if found == 0 {
		t.Fatalf("%s: %q not found", name, marker)
	}
	return found
}

func thread(t *testing.T, log *GDBLog, num int) *GDBThread {
	t.Helper()
	for i := range log.Threads {
		if log.Threads[i].Num == num {
			return &log.Threads[i]
		}
	}
	t.Fatalf("no thread %d among %d", num, len(log.Threads))
	return nil
}

// wantFrame checks a frame's function, source position and whether gdb
// printed a pc (line 0 skips the position check).
func wantFrame(t *testing.T, f GDBFrame, index int, fn, file string, line int, hasPC bool) {
	t.Helper()
	if f.Index != index || f.Function != fn || f.HasPC != hasPC {
		t.Errorf("frame %d: got #%d %q hasPC=%v, want #%d %q hasPC=%v", index, f.Index, f.Function, f.HasPC, index, fn, hasPC)
	}
	if file != "" && (f.File != file || (line != 0 && f.Line != line)) {
		t.Errorf("frame %d %s: at %s:%d, want %s:%d", index, fn, f.File, f.Line, file, line)
	}
	if hasPC && f.PC == 0 && fn != "??" {
		t.Errorf("frame %d %s: pc 0", index, fn)
	}
}

func TestCorpusAllCases(t *testing.T) {
	cases := loadManifest(t)
	if len(cases) < 11 {
		t.Fatalf("manifest has %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			log := parseCorpusFile(t, c.GDB)
			if log.Signal != c.Signal {
				t.Errorf("signal %q, want %q", log.Signal, c.Signal)
			}
			if log.SignalDesc == "" {
				t.Error("no signal description")
			}
			if log.CurrentThread != 1 {
				t.Errorf("current thread %d, want 1 (the thread that got the signal)", log.CurrentThread)
			}
			cur := thread(t, log, log.CurrentThread)
			if len(cur.Frames) == 0 {
				t.Fatal("current thread has no frames")
			}
			if cur.LWP <= 0 {
				t.Errorf("current thread LWP %d", cur.LWP)
			}
			for _, th := range log.Threads {
				for i, f := range th.Frames {
					if f.Index != i {
						t.Fatalf("thread %d: frame %d has index %d", th.Num, i, f.Index)
					}
					if f.Function == "" {
						t.Errorf("thread %d frame %d: no function", th.Num, i)
					}
				}
			}
			for _, v := range c.GDBViews {
				if vlog := parseCorpusFile(t, v); len(vlog.Threads) == 0 {
					t.Errorf("%s: no threads", v)
				}
			}
		})
	}
}

func TestCorpusNullInline(t *testing.T) {
	log := parseCorpusFile(t, "cores/null_inline.gdb.txt")
	if len(log.Threads) != 1 {
		t.Fatalf("%d threads", len(log.Threads))
	}
	fr := log.Threads[0].Frames
	if len(fr) != 5 {
		t.Fatalf("%d frames: %+v", len(fr), fr)
	}
	src := "null_inline.cpp"
	// Three inlined levels and the function they are inlined into: gdb
	// prints no pc for any of them.
	wantFrame(t, fr[0], 0, "value_of", src, sourceLine(t, src, "int value_of("), false)
	wantFrame(t, fr[1], 1, "next_value", src, sourceLine(t, src, "int next_value("), false)
	wantFrame(t, fr[2], 2, "add_next", src, sourceLine(t, src, "long add_next("), false)
	wantFrame(t, fr[3], 3, "sum_prefix", src, sourceLine(t, src, "sum = add_next(sum, n);"), false)
	wantFrame(t, fr[4], 4, "main", src, sourceLine(t, src, "sum_prefix(a, count));"), true)
	if fr[0].Args != "n=<optimized out>" {
		t.Errorf("value_of args %q", fr[0].Args)
	}
	if !strings.HasPrefix(fr[3].Args, "head=head@entry=0x") || !strings.HasSuffix(fr[3].Args, "count@entry=3") {
		t.Errorf("sum_prefix args %q", fr[3].Args)
	}
}

func TestCorpusThreads64(t *testing.T) {
	log := parseCorpusFile(t, "cores/threads64.gdb.txt")
	if len(log.Threads) != 65 {
		t.Fatalf("%d threads, want 65", len(log.Threads))
	}
	lwps := map[int]bool{}
	chains := map[string]int{}
	for i, th := range log.Threads {
		if th.Num != i+1 {
			t.Errorf("thread %d listed at %d", th.Num, i)
		}
		if th.LWP <= 0 || lwps[th.LWP] {
			t.Errorf("thread %d: LWP %d missing or repeated", th.Num, th.LWP)
		}
		lwps[th.LWP] = true
		if th.Num == 1 {
			continue
		}
		var names []string
		for _, f := range th.Frames {
			if f.File == "threads64.c" {
				names = append(names, f.Function)
			}
		}
		chains[strings.Join(names, "<")]++
	}
	// worker() parks through one of four call chains, by id % 4.
	want := map[string]int{
		"wait_for_work<queue_consumer<worker": 16,
		"wait_for_work<worker":                16,
		"idle_sleep<heartbeat_loop<worker":    16,
		"idle_sleep<worker":                   16,
	}
	if !reflect.DeepEqual(chains, want) {
		t.Errorf("worker call chains %v, want %v", chains, want)
	}
	main := thread(t, log, 1)
	wantFrame(t, main.Frames[0], 0, "finish_job", "threads64.c", sourceLine(t, "threads64.c", "*j->result = 42;"), false)
	wantFrame(t, main.Frames[1], 1, "main", "threads64.c", sourceLine(t, "threads64.c", "finish_job(&j);"), true)
}

func TestCorpusThreads64Live(t *testing.T) {
	// gdb shows thread names for a live process, in `info threads` and in
	// the `thread apply all bt` headers.
	log := parseCorpusFile(t, "cores/threads64.live.gdb.txt")
	if log.Signal != "SIGSEGV" || log.SignalDesc != "Segmentation fault" {
		t.Errorf("signal %q %q", log.Signal, log.SignalDesc)
	}
	if len(log.Threads) != 65 || log.CurrentThread != 1 {
		t.Fatalf("%d threads, current %d", len(log.Threads), log.CurrentThread)
	}
	if n := log.Threads[0].Name; n != "threads64" {
		t.Errorf("thread 1 name %q", n)
	}
	workers := map[string]bool{}
	for _, th := range log.Threads[1:] {
		if !strings.HasPrefix(th.Name, "worker-") || workers[th.Name] {
			t.Errorf("thread %d name %q", th.Num, th.Name)
		}
		workers[th.Name] = true
		if len(th.Frames) < 4 {
			t.Errorf("thread %d: %d frames", th.Num, len(th.Frames))
		}
	}
	wantFrame(t, log.Threads[0].Frames[0], 0, "finish_job", "threads64.c", 0, false)
}

func TestCorpusReraise(t *testing.T) {
	log := parseCorpusFile(t, "cores/reraise.gdb.txt")
	fr := thread(t, log, 1).Frames
	if len(fr) != 5 {
		t.Fatalf("%d frames: %+v", len(fr), fr)
	}
	src := "reraise.c"
	wantFrame(t, fr[0], 0, "syscall", "", 0, false)
	wantFrame(t, fr[1], 1, "SignalHandler", src, sourceLine(t, src, "syscall(SYS_tgkill"), true)
	if !fr[2].Signal || fr[2].Function != SignalHandlerCalled || fr[2].HasPC || fr[2].File != "" {
		t.Errorf("frame 2 is not the signal frame: %+v", fr[2])
	}
	wantFrame(t, fr[3], 3, "tensor_sum", src, sourceLine(t, src, "s += t->data[i];"), true)
	wantFrame(t, fr[4], 4, "main", src, sourceLine(t, src, "return (int)tensor_sum(&t);"), true)
	if fr[1].Args != "sig=11" {
		t.Errorf("SignalHandler args %q", fr[1].Args)
	}
}

func TestCorpusPlugin(t *testing.T) {
	log := parseCorpusFile(t, "cores/dlopen_plugin.gdb.txt")
	fr := thread(t, log, 1).Frames
	if len(fr) != 2 {
		t.Fatalf("%d frames", len(fr))
	}
	wantFrame(t, fr[0], 0, "plugin_run", "plugin.c", sourceLine(t, "plugin.c", "return s->value * 2;"), false)
	wantFrame(t, fr[1], 1, "main", "dlopen_main.c", sourceLine(t, "dlopen_main.c", "run(key));"), true)
}

func TestCorpusStaticDtor(t *testing.T) {
	log := parseCorpusFile(t, "cores/static_dtor.gdb.txt")
	fr := thread(t, log, 1).Frames
	src := "static_dtor.cpp"
	wantFrame(t, fr[0], 0, "Client::~Client", src, sourceLine(t, src, "conn->fd);"), false)
	wantFrame(t, fr[1], 1, "__run_exit_handlers", "./stdlib/exit.c", 0, true)
	if last := fr[len(fr)-1]; last.Function != "_start" || last.File != "" || last.Library != "" || last.Args != "" {
		t.Errorf("last frame %+v, want _start without source", last)
	}
}

func TestCorpusUncaughtThrow(t *testing.T) {
	log := parseCorpusFile(t, "cores/uncaught_throw.gdb.txt")
	fr := thread(t, log, 1).Frames
	libstdcxx := "/lib/x86_64-linux-gnu/libstdc++.so.6"
	byName := map[string]GDBFrame{}
	unknown := 0
	for _, f := range fr {
		byName[f.Function] = f
		if f.Function == "??" {
			unknown++
			if f.Library != libstdcxx || !f.HasPC || f.Args != "" {
				t.Errorf("?? frame %+v", f)
			}
		}
	}
	if unknown == 0 {
		t.Error("no ?? frames")
	}
	if f := byName["std::terminate()"]; f.Library != libstdcxx {
		t.Errorf("std::terminate() frame %+v", f)
	}
	if f := byName["__cxa_throw"]; f.Library != libstdcxx {
		t.Errorf("__cxa_throw frame %+v", f)
	}
	rc := byName["std::vector<int, std::allocator<int> >::_M_range_check"]
	if !strings.HasPrefix(rc.Args, "this=0x") || !strings.HasSuffix(rc.Args, ", __n=3") ||
		!strings.HasSuffix(rc.File, "/bits/stl_vector.h") || rc.Line == 0 {
		t.Errorf("_M_range_check frame %+v", rc)
	}
	src := "uncaught_throw.cpp"
	row := byName["(anonymous namespace)::Table<int>::row"]
	if row.File != src || row.Line != sourceLine(t, src, "return rows_.at(i);") || !strings.HasSuffix(row.Args, "i=3") {
		t.Errorf("Table<int>::row frame %+v", row)
	}
	op := byName["(anonymous namespace)::RowPrinter::operator()"]
	if op.File != src || op.Line != sourceLine(t, src, "int operator()(std::size_t i)") || !strings.HasSuffix(op.Args, "i=3") {
		t.Errorf("RowPrinter::operator() frame %+v", op)
	}
	wantFrame(t, fr[len(fr)-1], len(fr)-1, "main", src, sourceLine(t, src, "print(i);"), true)
}

func TestCorpusStackSmash(t *testing.T) {
	log := parseCorpusFile(t, "cores/stack_smash.gdb.txt")
	th := thread(t, log, 1)
	if len(th.Frames) != 1 {
		t.Fatalf("%d frames", len(th.Frames))
	}
	wantFrame(t, th.Frames[0], 0, "main", "stack_smash.c", 0, true)
	if th.Stopped != "Cannot access memory at address 0x4141414141414149" {
		t.Errorf("stopped %q", th.Stopped)
	}
}

func TestCorpusRecursion(t *testing.T) {
	log := parseCorpusFile(t, "cores/recursion.gdb.txt")
	fr := thread(t, log, 1).Frames
	if len(fr) < 25000 || len(fr) > 40000 {
		t.Fatalf("%d frames, want about 30,000", len(fr))
	}
	src := "recursion.c"
	// Frame 0 is in descend's prologue; its argument may be unreadable
	// ("<error reading variable: Cannot access memory at address ...>").
	wantFrame(t, fr[0], 0, "descend", src, 0, true)
	call := sourceLine(t, src, "return descend(depth + 1)")
	for _, f := range fr[1 : len(fr)-1] {
		if f.Function != "descend" || f.Line != call || !f.HasPC {
			t.Fatalf("frame %+v", f)
		}
	}
	wantFrame(t, fr[len(fr)-1], len(fr)-1, "main", src, sourceLine(t, src, "descend(0)"), true)
	if fr[len(fr)-2].Args != "depth=0" {
		t.Errorf("outermost descend args %q", fr[len(fr)-2].Args)
	}

	// bt 5, then bt -3: the first five, "(More stack frames follow...)",
	// the last three; and frame 0 as gdb printed it on loading the core.
	view := parseCorpusFile(t, "cores/recursion.bt5.gdb.txt")
	th := thread(t, view, 1)
	if !th.MoreFrames || len(th.Frames) != 8 {
		t.Fatalf("bt 5 view: more=%v, %d frames", th.MoreFrames, len(th.Frames))
	}
	for i := 0; i < 5; i++ {
		if th.Frames[i].Index != i {
			t.Errorf("bt 5 view frame %d: index %d", i, th.Frames[i].Index)
		}
	}
	wantFrame(t, th.Frames[7], th.Frames[7].Index, "main", src, 0, true)
	wantFrame(t, th.Frames[0], 0, "descend", src, 0, true)
}

// The terminal views were taken from the same cores as the batch output, so
// joining their wrapped lines must give the same frames.
func TestCorpusWrappedMatchesBatch(t *testing.T) {
	for _, name := range []string{"assert_abort", "uncaught_throw"} {
		t.Run(name, func(t *testing.T) {
			batch := parseCorpusFile(t, "cores/"+name+".gdb.txt")
			tty := parseCorpusFile(t, "cores/"+name+".tty80.gdb.txt")
			want := thread(t, batch, 1).Frames
			got := thread(t, tty, 1)
			if !reflect.DeepEqual(got.Frames, want) {
				for i := range min(len(got.Frames), len(want)) {
					if got.Frames[i] != want[i] {
						t.Errorf("frame %d:\n got %+v\nwant %+v", i, got.Frames[i], want[i])
					}
				}
				t.Fatalf("%d frames from the terminal, %d from batch", len(got.Frames), len(want))
			}
			if tty.CurrentThread != 1 || got.LWP != thread(t, batch, 1).LWP {
				t.Errorf("current %d, LWP %d", tty.CurrentThread, got.LWP)
			}
		})
	}
}

func TestCorpusAbortMessages(t *testing.T) {
	// Arguments with quotes, parentheses and " at " inside strings.
	log := parseCorpusFile(t, "cores/double_free.gdb.txt")
	var printerr *GDBFrame
	for i, f := range thread(t, log, 1).Frames {
		if f.Function == "malloc_printerr" {
			printerr = &thread(t, log, 1).Frames[i]
		}
	}
	if printerr == nil || !strings.Contains(printerr.Args, `"free(): double free detected in tcache 2"`) ||
		printerr.File != "./malloc/malloc.c" {
		t.Fatalf("malloc_printerr frame %+v", printerr)
	}
	fr := thread(t, log, 1).Frames
	src := "double_free.c"
	wantFrame(t, fr[len(fr)-2], len(fr)-2, "message_release", src, sourceLine(t, src, "free(m->body)"), true)

	log = parseCorpusFile(t, "cores/assert_abort.gdb.txt")
	fr = thread(t, log, 1).Frames
	src = "assert_abort.c"
	wantFrame(t, fr[len(fr)-2], len(fr)-2, "buffer_append", src, sourceLine(t, src, "assert(b->len"), true)
	for _, f := range fr {
		if f.Function == "__assert_fail_base" && (!strings.Contains(f.Args, "Assertion `%s' failed.") || f.File != "./assert/assert.c") {
			t.Errorf("__assert_fail_base frame %+v", f)
		}
	}
}

func TestCorpusSmallCases(t *testing.T) {
	log := parseCorpusFile(t, "cores/demo.gdb.txt")
	th := thread(t, log, 1)
	wantFrame(t, th.Frames[0], 0, "field_value", "demo.c", sourceLine(t, "demo.c", "return f->value; }"), false)
	wantFrame(t, th.Frames[1], 1, "record_timeout", "demo.c", sourceLine(t, "demo.c", `field_value(find_field(r, "timeout"))`), false)
	if th.Frames[0].Args != "f=0x0" {
		t.Errorf("field_value args %q", th.Frames[0].Args)
	}

	log = parseCorpusFile(t, "cores/sigfpe.gdb.txt")
	if log.SignalDesc != "Arithmetic exception" {
		t.Errorf("sigfpe desc %q", log.SignalDesc)
	}
	wantFrame(t, thread(t, log, 1).Frames[0], 0, "average", "sigfpe.c", sourceLine(t, "sigfpe.c", "return total / count;"), true)

	log = parseCorpusFile(t, "cores/noncanonical.gdb.txt")
	wantFrame(t, thread(t, log, 1).Frames[0], 0, "entry_key", "noncanonical.c", sourceLine(t, "noncanonical.c", "return e->next->key;"), false)
}

func TestParseGDBRejectsNonGDB(t *testing.T) {
	for _, in := range []string{"", "hello\nworld\n", "#include <stdio.h>\n", "Thread x (y):\n"} {
		log, err := ParseGDB(strings.NewReader(in))
		var pe *ParseError
		if log != nil || !errors.As(err, &pe) || !errors.Is(err, ErrNotGDBLog) {
			t.Errorf("ParseGDB(%q) = %v, %v; want ErrNotGDBLog", in, log, err)
		}
	}
}

func TestParseGDBPromptsAndStyling(t *testing.T) {
	// A session pasted from a styled terminal: take the batch output of a
	// corpus file, style its frame lines as gdb does and prefix prompts.
	data, err := os.ReadFile(filepath.Join(corpusDir, "cores/reraise.gdb.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("(gdb) thread apply all bt\r\n")
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "#") {
			line = strings.Replace(line, " in ", " in \x1b[33m", 1) + "\x1b[m"
		}
		b.WriteString(line + "\r\n")
	}
	want := parseCorpusFile(t, "cores/reraise.gdb.txt")
	got, err := ParseGDB(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("styled log parsed differently:\n got %+v\nwant %+v", got, want)
	}
}

// TestWarningInsideFrameArguments: gdb 13 printing a Rust thread's frames
// (analysis/realworld's rust_frames.rs) interrupts frame #6's arguments
// with two warnings of its own, and the frame goes on after them. The
// frame keeps its function, file and line; the warnings are not frames.
func TestWarningInsideFrameArguments(t *testing.T) {
	const out = `Thread 2 (Thread 0x7fd4bb81e6c0 (LWP 18081)):
#5  0x0000562b36af0389 in core::ops::function::FnOnce::call_once<fn(), ()> () at /usr/src/rustc-1.63.0/library/core/src/ops/function.rs:248
#6  0x0000562b36aee529 in std::sys_common::backtrace::__rust_begin_short_backtrace<fn(), ()> (f=warning: (Internal error: pc 0x562b36b409e8 in read in CU, but not in symtab.)
warning: (Error: pc 0x562b36b409e8 in address map, but not in symtab.)
0x562b36b409e8) at /usr/src/rustc-1.63.0/library/std/src/sys_common/backtrace.rs:122
#7  0x0000562b36aecca6 in std::thread::{impl#0}::spawn_unchecked_::{closure#1}::{closure#0}<fn(), ()> () at /usr/src/rustc-1.63.0/library/std/src/thread/mod.rs:505
`
	log, err := ParseGDB(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	fs := log.Threads[0].Frames
	if len(fs) != 3 {
		t.Fatalf("%d frames, want 3: %+v", len(fs), fs)
	}
	f := fs[1]
	if f.Function != "std::sys_common::backtrace::__rust_begin_short_backtrace<fn(), ()>" || f.Line != 122 ||
		f.File != "/usr/src/rustc-1.63.0/library/std/src/sys_common/backtrace.rs" {
		t.Errorf("frame #6: %q at %s:%d", f.Function, f.File, f.Line)
	}
	if fs[2].Index != 7 || fs[2].Line != 505 {
		t.Errorf("frame #7: %+v", fs[2])
	}
}
