package classify_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/classify"
	"github.com/faultline-dev/faultline/analysis/model"
)

const corpus = "../../testdata/native"

// open analyzes a corpus core with its binary (and search dirs).
func open(t *testing.T, core, bin string, search ...string) *analysis.Crash {
	t.Helper()
	path := filepath.Join(corpus, "cores", core)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s not in the corpus (testdata/native/gen.sh makes it): %v", core, err)
	}
	opt := analysis.Options{Exe: filepath.Join(corpus, "bin", bin)}
	for _, s := range search {
		opt.SearchDirs = append(opt.SearchDirs, filepath.Join(corpus, s))
	}
	c, err := analysis.Open(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	if c.Classification == nil {
		t.Fatal("analysis.Open did not classify the crash")
	}
	return c
}

func culpritFunction(c *analysis.Crash) string {
	cls := c.Classification
	for _, th := range c.Threads {
		if th.ID == c.CrashingThreadID && cls.CulpritFrame >= 0 && cls.CulpritFrame < len(th.Frames) {
			return th.Frames[cls.CulpritFrame].Function
		}
	}
	return ""
}

// TestCorpus gives every crash program of the core-engine corpus its
// expected kind, context and culprit (what each program was written to do;
// see testdata/native/*.c).
func TestCorpus(t *testing.T) {
	cases := []struct {
		name, kind, context, culprit string
		reraised                     bool
		search                       []string
		evidence                     string // a substring one evidence line must have
	}{
		{name: "null_inline", kind: model.KindNullDeref, context: model.ContextRuntime, culprit: "value_of", evidence: "%rdi = 0x0 (NULL)"},
		{name: "dlopen_plugin", kind: model.KindNullDeref, context: model.ContextRuntime, culprit: "plugin_run", search: []string{"bin"}},
		{name: "threads64", kind: model.KindNullDeref, context: model.ContextRuntime, culprit: "finish_job"},
		{name: "reraise", kind: model.KindNullDeref, context: model.ContextRuntime, culprit: "tensor_sum", reraised: true, evidence: "trap 14"},
		{name: "static_dtor", kind: model.KindNullDeref, context: model.ContextExitTime, culprit: "Client::~Client"},
		{name: "uncaught_throw", kind: model.KindAbort, context: model.ContextRuntime, culprit: "(anonymous namespace)::Table<int>::row", evidence: "std::out_of_range"},
		{name: "stack_smash", kind: model.KindBusError, context: model.ContextRuntime, culprit: "main", evidence: "0x4141414141414141"},
		{name: "recursion", kind: model.KindStackOverflow, context: model.ContextRuntime, culprit: "descend", evidence: "cycle descend repeats"},
		{name: "assert_abort", kind: model.KindAssertion, context: model.ContextRuntime, culprit: "buffer_append"},
		{name: "double_free", kind: model.KindHeapCorruption, context: model.ContextRuntime, culprit: "message_release"},
		{name: "noncanonical", kind: model.KindWildPointer, context: model.ContextRuntime, culprit: "entry_key", evidence: "0xdead000000000010 is non-canonical"},
		{name: "sigfpe", kind: model.KindDivideByZero, context: model.ContextRuntime, culprit: "average", evidence: "= 0"},
		{name: "demo", kind: model.KindNullDeref, context: model.ContextRuntime, culprit: "field_value"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := open(t, tc.name+".core.gz", tc.name, tc.search...)
			cls := c.Classification
			if cls.Kind != tc.kind || cls.Context != tc.context || cls.Reraised != tc.reraised {
				t.Errorf("kind %s, context %s, reraised %v; want %s, %s, %v", cls.Kind, cls.Context, cls.Reraised, tc.kind, tc.context, tc.reraised)
			}
			if got := culpritFunction(c); got != tc.culprit {
				t.Errorf("culprit frame #%d is %q, want %q", cls.CulpritFrame, got, tc.culprit)
			}
			if cls.Summary == "" || cls.Signature == "" {
				t.Errorf("empty summary %q or signature %q", cls.Summary, cls.Signature)
			}
			if !strings.HasPrefix(cls.Signature, strings.Split(tc.culprit, "<")[0]) && !strings.Contains(cls.Signature, "| "+strings.Split(tc.culprit, "<")[0]) {
				t.Errorf("signature %q does not name the culprit %s", cls.Signature, tc.culprit)
			}
			if tc.evidence != "" && !strings.Contains(strings.Join(cls.Evidence, "\n"), tc.evidence) {
				t.Errorf("no evidence mentions %q:\n%s", tc.evidence, strings.Join(cls.Evidence, "\n"))
			}
		})
	}
}

// gdbPrint evaluates expr in gdb on a corpus core, the oracle for values
// read from core memory.
func gdbPrint(t *testing.T, bin, core, expr string) string {
	t.Helper()
	if _, err := exec.LookPath("gdb"); err != nil {
		t.Skip("gdb is not installed (apt-get install gdb)")
	}
	raw := filepath.Join(t.TempDir(), "core")
	gz, err := exec.Command("gzip", "-dc", filepath.Join(corpus, "cores", core)).Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(raw, gz, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("gdb", "-batch", "-nx", "-ex", "set print elements 0", "-ex", "output "+expr,
		filepath.Join(corpus, "bin", bin), raw).CombinedOutput()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// TestAbortMessage checks the message read from glibc's __abort_msg
// against gdb's view of the same memory.
func TestAbortMessage(t *testing.T) {
	for _, name := range []string{"assert_abort", "double_free"} {
		t.Run(name, func(t *testing.T) {
			c := open(t, name+".core.gz", name)
			want := gdbPrint(t, name, name+".core.gz", "__abort_msg->msg")
			want, err := strconv.Unquote(strings.TrimSpace(want[strings.Index(want, "\""):]))
			if err != nil {
				t.Fatalf("gdb's string: %v", err)
			}
			if got := c.Classification.Message; got != strings.TrimRight(want, "\n") {
				t.Errorf("message %q, gdb says %q", got, want)
			}
		})
	}
}

// TestDeadlock: the lock-order deadlock dumped with gcore names both
// threads and both mutexes, with owners as gdb reads them.
func TestDeadlock(t *testing.T) {
	c := open(t, "lock_deadlock.core.gz", "lock_deadlock")
	cls := c.Classification
	if cls.Kind != model.KindDeadlock {
		t.Fatalf("kind %s, want deadlock; evidence:\n%s", cls.Kind, strings.Join(cls.Evidence, "\n"))
	}
	owners := map[string]int{}
	for _, mutex := range []string{"accounts_lock", "journal_lock"} {
		v, err := strconv.Atoi(gdbPrint(t, "lock_deadlock", "lock_deadlock.core.gz", mutex+".__data.__owner"))
		if err != nil {
			t.Fatal(err)
		}
		owners[mutex] = v
	}
	if len(cls.Locks) != 2 {
		t.Fatalf("locks %+v, want the two workers'", cls.Locks)
	}
	for _, l := range cls.Locks {
		want, ok := owners[l.Name]
		if !ok || l.Owner != want || l.Thread == l.Owner {
			t.Errorf("lock wait %+v: gdb says %s is owned by %d", l, l.Name, want)
		}
		if !strings.Contains(cls.Summary, l.Name) || !strings.Contains(cls.Summary, strconv.Itoa(l.Thread)) {
			t.Errorf("summary does not name thread %d and %s: %s", l.Thread, l.Name, cls.Summary)
		}
	}
	if len(cls.Findings) != 1 || cls.Findings[0].Kind != "deadlock" || len(cls.Findings[0].Threads) != 2 {
		t.Errorf("findings %+v", cls.Findings)
	}
	for _, fn := range []string{"transfer_in", "flush_journal"} {
		if !strings.Contains(cls.Summary, fn) {
			t.Errorf("summary does not say where the threads wait (%s): %s", fn, cls.Summary)
		}
	}
}

// TestRacyMapManyCores: several cores of the racy hash map are grouped
// as non-deterministic, with a likely race naming two threads.
func TestRacyMapManyCores(t *testing.T) {
	cores, _ := filepath.Glob(filepath.Join(corpus, "cores", "racy_map.*.core.gz"))
	if len(cores) < 2 {
		t.Skip("racy_map cores missing (testdata/native/gen.sh --classify-only)")
	}
	var crashes []*model.Crash
	for _, core := range cores {
		crashes = append(crashes, open(t, filepath.Base(core), "racy_map"))
	}
	set := classify.GroupCrashes(crashes)
	if set.Determinism != classify.NonDeterministic || len(set.Groups) < 2 {
		t.Errorf("determinism %s with %d groups, want non-deterministic", set.Determinism, len(set.Groups))
	}
	if len(set.Findings) == 0 || set.Findings[0].Kind != "likely-race" {
		t.Fatalf("no likely race across cores: %+v", set.Findings)
	}
	for _, c := range crashes {
		for _, f := range c.Classification.Findings {
			if f.Kind == "likely-race" && len(f.Threads) < 2 {
				t.Errorf("%s: a race finding names %v, want two threads", c.Dump.Path, f.Threads)
			}
		}
		if culpritFunction(c) != "churn" {
			t.Errorf("%s: culprit %q, want churn", c.Dump.Path, culpritFunction(c))
		}
	}
	// The same core twice is deterministic.
	same := classify.GroupCrashes([]*model.Crash{crashes[0], crashes[0]})
	if same.Determinism != classify.Deterministic {
		t.Errorf("one core twice: %s", same.Determinism)
	}
}
