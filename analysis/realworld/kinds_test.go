package realworld_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/model"
)

// kindCase is one crash of kinds.c: its mode (and arguments), the ulimit
// settings it runs under, and what faultline must say of it.
type kindCase struct {
	mode     []string
	ulimits  string
	kind     string
	culprit  string
	reraised bool
	summary  []string // substrings of the summary
	evidence string   // a substring one evidence line must have
	gdb      bool     // compare every frame with gdb's
}

// TestKindCulpritSummary: each shape of issue 23's items 10, 11, 13, 15
// and 16 crashed into a real core (kinds.c, gcc -O1): the kind, the
// culprit frame and the summary name what happened, and where frames
// matter they equal gdb's.
func TestKindCulpritSummary(t *testing.T) {
	bin := cachedBuild(t, "kinds", []string{"kinds.c"}, "gcc", "-O1", "-g", "-o", "$OUT", "kinds.c")
	plug := cachedBuild(t, "libplug.so", []string{"plug.c"}, "gcc", "-O1", "-g", "-shared", "-fPIC", "-o", "$OUT", "plug.c")
	cases := map[string]kindCase{
		"nullfn": {kind: model.KindNullDeref, culprit: "dispatch", gdb: true,
			summary: []string{"Call through a NULL function pointer in dispatch (kinds.c:", "jumped to address 0x0"}},
		"dlclose": {mode: []string{plug}, kind: model.KindWildPointer, culprit: "run_plugin", gdb: true,
			summary:  []string{"Call into code that is no longer mapped, from run_plugin (kinds.c:", "dlclose()"},
			evidence: "no mapping of the core holds"},
		"rodata": {kind: model.KindWriteReadonly, culprit: "shout",
			summary: []string{"Write to read-only memory (.rodata) in shout (kinds.c:", "string literal"}},
		"sse": {kind: model.KindMisaligned, culprit: "sum4", gdb: true,
			summary: []string{"Misaligned SSE access in sum4 (kinds.c:", "`movapd` needs a 16-byte-aligned address", "8 mod 16"}},
		"avx": {kind: model.KindMisaligned, culprit: "sum8", gdb: true,
			summary: []string{"Misaligned AVX access in sum8 (kinds.c:", "`vmovapd` needs a 32-byte-aligned address", "16 mod 32", "vmovupd, _mm256_loadu_pd"}},
		"seccomp": {kind: model.KindForbiddenSyscall, culprit: "parent_of_worker", gdb: true,
			summary: []string{"seccomp filter refused getppid (x86_64 system call 110), made from parent_of_worker (kinds.c:"}},
		"xcpu": {kind: model.KindResourceLimit, culprit: "spin", summary: []string{"CPU time limit exceeded", "spin (kinds.c:"}},
		"xfsz": {kind: model.KindResourceLimit, culprit: "write_log", gdb: true,
			summary: []string{"File size limit exceeded: write_log (kinds.c:", "RLIMIT_FSIZE"}},
		"return-segv": {kind: model.KindNullDeref, culprit: "read_field", reraised: true, gdb: true,
			summary: []string{"NULL pointer dereference in read_field (kinds.c:"}, evidence: "the handler's signal frame is still in the stack memory below %rsp"},
		"return-altstack": {kind: model.KindNullDeref, culprit: "read_field", reraised: true,
			summary: []string{"NULL pointer dereference in read_field"}, evidence: "the instruction at the pc, `mov 0x10(%rdi),%eax`, faults with these registers"},
		"return-fpe": {kind: model.KindDivideByZero, culprit: "ratio", reraised: true,
			summary: []string{"Division by zero in ratio (kinds.c:"}, evidence: "its divisor %esi is 0"},
		"return-bus": {kind: model.KindBusError, culprit: "first_byte", reraised: true,
			summary: []string{"Bus error: first_byte (kinds.c:", "past the end of a memory-mapped file"}},
		"return-bus-cut": {mode: []string{"big"}, ulimits: "ulimit -c 2048", kind: model.KindUnknown, culprit: "first_byte", reraised: true,
			summary: []string{"Unknown: SIGBUS was re-raised by a handler that returned", "get a whole core"}, evidence: "where the handler's signal frame was, is cut off the core"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			mode := strings.TrimSuffix(name, "-cut")
			core, _ := crashlab.Crash(t, t.TempDir(), tc.ulimits, append([]string{bin, mode}, tc.mode...)...)
			c, err := analysis.Open(core, analysis.Options{Exe: bin})
			if err != nil {
				t.Fatal(err)
			}
			checkKindCase(t, c, tc)
			if tc.gdb {
				if d := crashlab.CompareWithGDB(crashlab.GDB(t, bin, core, filepath.Dir(plug)), c); d != "" {
					t.Errorf("frames differ from gdb:\n%s", d)
				}
			}
		})
	}
}

// checkKindCase asserts the kind, culprit, summary and evidence.
func checkKindCase(t *testing.T, c *model.Crash, tc kindCase) {
	t.Helper()
	cls := c.Classification
	if cls.Kind != tc.kind || culprit(c) != tc.culprit || cls.Reraised != tc.reraised {
		t.Errorf("kind %s, culprit %q, reraised %v; want %s, %q, %v\nsummary %q\nevidence %q", cls.Kind, culprit(c), cls.Reraised,
			tc.kind, tc.culprit, tc.reraised, cls.Summary, cls.Evidence)
	}
	for _, w := range tc.summary {
		if !strings.Contains(cls.Summary, w) {
			t.Errorf("summary %q lacks %q", cls.Summary, w)
		}
	}
	if tc.evidence != "" && !strings.Contains(strings.Join(cls.Evidence, "\n"), tc.evidence) {
		t.Errorf("no evidence line has %q:\n%s", tc.evidence, strings.Join(cls.Evidence, "\n"))
	}
	if strings.Contains(cls.Signature, "0x") || strings.Contains(cls.Signature, "??") {
		t.Errorf("signature %q has an address or an unknown frame", cls.Signature)
	}
	if strings.Contains(cls.Summary, "Killed") || strings.Contains(cls.Summary, "aligned pointer loaded") {
		t.Errorf("summary %q", cls.Summary)
	}
}
