package realworld_test

import (
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/model"
)

// TestCxxChecks: libstdc++'s own checks are assertions with their message
// — a _GLIBCXX_ASSERTIONS precondition (std::__glibcxx_assert_fail, its
// arguments read from the constants its caller set up) and a
// _GLIBCXX_DEBUG check (its _Error_formatter's text and parameters) — and
// an exception escaping a destructor says the destructor is noexcept;
// clang's control-flow-integrity checks are cfi-violation, trapped (ud1,
// its check ID) or reported by the runtime (the expected type from the
// check's data). Frames equal gdb's.
func TestCxxChecks(t *testing.T) {
	assertions := cachedBuild(t, "cxxchecks-assertions", []string{"cxxchecks.cpp"}, "g++", "-O1", "-g", "-D_GLIBCXX_ASSERTIONS", "-o", "$OUT", "cxxchecks.cpp")
	debug := cachedBuild(t, "cxxchecks-debug", []string{"cxxchecks.cpp"}, "g++", "-O1", "-g", "-D_GLIBCXX_DEBUG", "-o", "$OUT", "cxxchecks.cpp")
	cfiFlags := []string{"clang++", "-O1", "-g", "-flto", "-fvisibility=hidden", "-fsanitize=cfi"}
	cfiTrap := cachedBuild(t, "cfi-trap", []string{"cfi.cpp"}, append(cfiFlags, "-o", "$OUT", "cfi.cpp")...)
	cfiDiag := cachedBuild(t, "cfi-diag", []string{"cfi.cpp"}, append(cfiFlags, "-fno-sanitize-trap=cfi", "-fno-sanitize-recover=cfi", "-o", "$OUT", "cfi.cpp")...)
	for _, tc := range []struct {
		name, bin, mode string
		want            kindCase
	}{
		{"glibcxx-assertions", assertions, "index", kindCase{kind: model.KindAssertion, culprit: "Shard::row",
			summary:  []string{"Assertion `__n < this->size()` failed in std::vector::operator[], called from Shard::row (cxxchecks.cpp:", "_GLIBCXX_ASSERTIONS"},
			evidence: "stl_vector.h:1142: std::vector<_Tp, _Alloc>::const_reference"}},
		{"glibcxx-debug", debug, "index", kindCase{kind: model.KindAssertion, culprit: "Shard::row",
			summary: []string{"debug-mode check (_GLIBCXX_DEBUG) failed in std::__debug::vector::operator[], called from Shard::row (cxxchecks.cpp:",
				"attempt to subscript container with out-of-bounds index 7, but container only holds 3 elements."}}},
		{"noexcept-destructor", assertions, "dtor", kindCase{kind: model.KindAbort, culprit: "Journal::~Journal",
			summary: []string{"Exception std::runtime_error escaped the destructor Journal::~Journal (cxxchecks.cpp:", "which is noexcept", "journal flush failed"}}},
		{"cfi-trap-icall", cfiTrap, "icall", kindCase{kind: model.KindCFIViolation, culprit: "run_handler",
			summary: []string{"Control-flow integrity check failed in run_handler (cfi.cpp:"}, evidence: "check 2, cfi_check_fail"}},
		{"cfi-diag-icall", cfiDiag, "icall", kindCase{kind: model.KindCFIViolation, culprit: "run_handler",
			summary: []string{"an indirect call through a pointer to a function that is not of type 'int (int)'"}}},
		{"cfi-diag-cast", cfiDiag, "vcall", kindCase{kind: model.KindCFIViolation, culprit: "main",
			summary: []string{"a cast to an unrelated type of an object that is not a 'Shape'"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := "export UBSAN_OPTIONS=abort_on_error=1:disable_coredump=0"
			core, _ := crashlab.Crash(t, t.TempDir(), env, tc.bin, tc.mode)
			c, err := analysis.Open(core, analysis.Options{Exe: tc.bin})
			if err != nil {
				t.Fatal(err)
			}
			checkKindCase(t, c, tc.want)
			if d := crashlab.CompareWithGDB(crashlab.GDB(t, tc.bin, core), c); d != "" {
				t.Errorf("frames differ from gdb:\n%s", d)
			}
		})
	}
}
