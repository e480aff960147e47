package realworld_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/model"
)

// TestAddressSanitizer: clang links ASan's runtime into the executable,
// gcc links libasan.so (its runtime frames are in that module); an
// ASan abort is classified from the report ASan was writing, still in its
// frames' stack memory (the bug type as ASan names it, the bad address and
// its shadow byte), and from ASan's own report when its log is given, with
// the culprit the first program frame (never __sanitizer::Abort or
// __asan_report_load8).
func TestAddressSanitizer(t *testing.T) {
	for _, compiler := range []string{"clang", "gcc"} {
		t.Run(compiler, func(t *testing.T) { testAddressSanitizer(t, compiler) })
	}
}

func testAddressSanitizer(t *testing.T, compiler string) {
	bin := buildOnce(t, "asan-"+compiler, compiler, []string{"asan.c"}, "-fsanitize=address", "-O1", "-g")
	for _, tc := range []struct {
		mode, culprit, check, kind string
		withLog                    []string
		shadow                     string // the shadow byte's evidence
	}{
		{"uaf", "request_size", "8-byte read", model.KindUseAfterFree, []string{"heap-use-after-free", "freed in main (asan.c:", "allocated in main (asan.c:"}, "shadow byte 0xfd"},
		{"overflow", "fill_ids", "8-byte write", model.KindBufferOverflow, []string{"heap-buffer-overflow", "allocated in main (asan.c:"}, "shadow byte 0xfa"},
		{"stack", "sum_window", "8-byte read", model.KindBufferOverflow, []string{"stack-buffer-overflow"}, "shadow byte 0xf"},
		{"global", "lookup_code", "4-byte read", model.KindBufferOverflow, []string{"global-buffer-overflow"}, "shadow byte 0xf9"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			dir := t.TempDir()
			core, stderr := crashlab.Crash(t, dir, "export ASAN_OPTIONS=abort_on_error=1:disable_coredump=0", bin, tc.mode)
			log := filepath.Join(dir, "asan.log")
			if err := os.WriteFile(log, []byte(stderr), 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := analysis.Open(core, analysis.Options{Exe: bin})
			if err != nil {
				t.Fatal(err)
			}
			cls := c.Classification
			addr := asanAddress(stderr)
			if cls.Kind != tc.kind || culprit(c) != tc.culprit || !strings.Contains(cls.Summary, tc.check) ||
				!strings.Contains(cls.Summary, "AddressSanitizer: "+tc.withLog[0]) || addr == "" || !strings.Contains(cls.Summary, addr) {
				t.Errorf("without the log: kind %s, culprit %q, summary %q; want %s in %s, %q, %s on %s", cls.Kind, culprit(c), cls.Summary,
					tc.kind, tc.culprit, tc.check, tc.withLog[0], addr)
			}
			if !strings.Contains(strings.Join(cls.Evidence, "\n"), tc.shadow) {
				t.Errorf("no evidence has %q:\n%s", tc.shadow, strings.Join(cls.Evidence, "\n"))
			}
			if tc.mode == "uaf" {
				if d := crashlab.CompareWithGDB(crashlab.GDB(t, bin, core), c); d != "" {
					t.Errorf("frames differ from gdb:\n%s", d)
				}
			}
			c, err = analysis.Open(core, analysis.Options{Exe: bin, SanitizerLog: log})
			if err != nil {
				t.Fatal(err)
			}
			cls = c.Classification
			if cls.Kind != tc.kind || culprit(c) != tc.culprit {
				t.Errorf("with the log: kind %s, culprit %q; want %s, %s (summary %q)", cls.Kind, culprit(c), tc.kind, tc.culprit, cls.Summary)
			}
			for _, w := range append(tc.withLog, tc.check) {
				if !strings.Contains(cls.Summary, w) {
					t.Errorf("summary %q lacks %q", cls.Summary, w)
				}
			}
			if c.Sanitizer == nil || c.Sanitizer.Bug != tc.withLog[0] {
				t.Errorf("crash model's sanitizer section %+v", c.Sanitizer)
			}
			if strings.Contains(cls.Signature, "0x") || strings.Contains(cls.Signature, "__asan") || strings.Contains(cls.Signature, "__sanitizer") {
				t.Errorf("signature %q has runtime frames or addresses", cls.Signature)
			}
		})
	}
}

// asanAddress is the address ASan's report names: "==1==ERROR:
// AddressSanitizer: heap-use-after-free on address 0x602000000018 at pc".
func asanAddress(report string) string {
	_, rest, ok := strings.Cut(report, " on address ")
	if !ok {
		return ""
	}
	addr, _, _ := strings.Cut(rest, " ")
	return addr
}

// TestLeakSanitizer: LeakSanitizer's check at exit (ASan's, with
// detect_leaks=1) aborts in no frame of the program: kind memory-leak, no
// culprit, one signature for every leaking run.
func TestLeakSanitizer(t *testing.T) {
	bin := buildOnce(t, "asan-clang", "clang", []string{"asan.c"}, "-fsanitize=address", "-O1", "-g")
	core, _ := crashlab.Crash(t, t.TempDir(), "export ASAN_OPTIONS=abort_on_error=1:disable_coredump=0:detect_leaks=1", bin, "leak")
	c, err := analysis.Open(core, analysis.Options{Exe: bin})
	if err != nil {
		t.Fatal(err)
	}
	cls := c.Classification
	if cls.Kind != model.KindMemoryLeak || cls.CulpritFrame != -1 || !strings.HasPrefix(cls.Summary, "LeakSanitizer: ") ||
		strings.Contains(cls.Signature, "__do_global_dtors_aux") {
		t.Errorf("kind %s, culprit %d, summary %q, signature %q; want memory-leak with no culprit", cls.Kind, cls.CulpritFrame, cls.Summary, cls.Signature)
	}
	// gdb misreads __do_global_dtors_aux, crtstuff code without CFI whose
	// push %rbp its prologue analysis misses (a cmpq sits between the push
	// and the mov %rsp,%rbp): it takes the saved %rbp for the return
	// address and shows a `??` frame there, before _dl_call_fini.
	compareThreads(t, crashlab.GDB(t, bin, core), c, func(want []string, th model.Thread) ([]string, []string) {
		for i := 1; i < len(want); i++ {
			if want[i] == "??" && want[i-1] == "__do_global_dtors_aux" {
				want = append(want[:i:i], want[i+1:]...)
				break
			}
		}
		return want, crashlab.ModelLines(th)
	})
}

// TestOtherSanitizers: UndefinedBehaviorSanitizer (clang's runtime linked
// in, gcc's libubsan.so), ThreadSanitizer and MemorySanitizer each stop
// the program with their own kind and sentence, blaming the program's
// frame; the frames equal gdb's.
func TestOtherSanitizers(t *testing.T) {
	for _, tc := range []struct {
		name, compiler, mode, kind, culprit, summary string
		flags                                        []string
	}{
		{"ubsan-clang", "clang", "ubsan", model.KindUndefinedBehavior, "add_scores", "UndefinedBehaviorSanitizer: signed integer overflow in an addition in add_scores (sanitizers.c:",
			[]string{"-fsanitize=undefined", "-fno-sanitize-recover=undefined"}},
		{"ubsan-gcc", "gcc", "ubsan", model.KindUndefinedBehavior, "add_scores", "UndefinedBehaviorSanitizer: signed integer overflow in an addition in add_scores (sanitizers.c:",
			[]string{"-fsanitize=undefined", "-fno-sanitize-recover=undefined"}},
		{"tsan", "clang", "tsan", model.KindDataRace, "bump", "ThreadSanitizer: data race in bump (sanitizers.c:", []string{"-fsanitize=thread"}},
		{"msan", "clang", "msan", model.KindUninitialized, "main", "MemorySanitizer: use of an uninitialised value in main (sanitizers.c:", []string{"-fsanitize=memory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append(append([]string{tc.compiler, "-O1", "-g"}, tc.flags...), "-pthread", "-o", "$OUT", "sanitizers.c")
			bin := cachedBuild(t, "sanitizers-"+tc.name, []string{"sanitizers.c"}, args...)
			opts := "abort_on_error=1:disable_coredump=0:halt_on_error=1"
			env := fmt.Sprintf("export UBSAN_OPTIONS=%s TSAN_OPTIONS=%s MSAN_OPTIONS=%s", opts, opts, opts)
			core, _ := crashlab.Crash(t, t.TempDir(), env, bin, tc.mode)
			c, err := analysis.Open(core, analysis.Options{Exe: bin})
			if err != nil {
				t.Fatal(err)
			}
			checkKindCase(t, c, kindCase{kind: tc.kind, culprit: tc.culprit, summary: []string{tc.summary}})
			if d := crashlab.CompareWithGDB(crashlab.GDB(t, bin, core), c); d != "" {
				t.Errorf("frames differ from gdb:\n%s", d)
			}
		})
	}
}
