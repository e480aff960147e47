package job

import (
	"slices"
	"testing"
)

// TestInnermost: a task's wrapper shell (same step and rank as its child)
// gives way to the rank; a worker the rank forked gives way to the rank;
// processes of other ranks and steps are kept.
func TestInnermost(t *testing.T) {
	procs := map[int]proc{
		10: {10, 1, "bash", "0/0", false},     // srun's task: bash -c ./train
		11: {11, 10, "train", "0/0", false},   // rank 0
		12: {12, 11, "train", "0/0", false},   // a data loader worker rank 0 forked
		20: {20, 1, "train", "0/1", false},    // rank 1, no wrapper
		30: {30, 1, "numactl", "0/2", false},  // numactl --cpunodebind=0 ./train
		31: {31, 30, "train", "0/2", false},   // rank 2
		40: {40, 1, "torchrun", "1/0", false}, // step 1's launcher on node 0 (SLURM_PROCID=0) ...
		41: {41, 40, "python3", "1/0", true},  // ... its workers: RANK=0
		42: {42, 40, "python3", "1/1", true},  // RANK=1
		43: {43, 42, "python3", "1/1", true},  // a worker RANK=1 forked
	}
	got := innermost(procs)
	if want := []int{11, 20, 31, 41, 42}; !slices.Equal(got, want) {
		t.Errorf("innermost = %v, want %v", got, want)
	}
}

// TestPatternDir: kernel.core_pattern as a directory and file matcher.
func TestPatternDir(t *testing.T) {
	for _, tc := range []struct {
		pattern, workDir, dir string
		match, nomatch        []string
	}{
		{"core", "/w", "/w", []string{"core", "core.4242"}, []string{"corex", "core.txt.gz.x/", "acore"}},
		{"/var/crash/core.%e.%p", "/w", "/var/crash", []string{"core.train.12", "core.a.b.1"}, []string{"core.train", "x.core.a.1"}},
		{"cores/%%core[%p]", "/job", "/job/cores", []string{"%core[7]"}, []string{"%corex7"}},
	} {
		dir, match := patternDir(tc.pattern, tc.workDir)
		if dir != tc.dir {
			t.Errorf("patternDir(%q) dir = %q, want %q", tc.pattern, dir, tc.dir)
		}
		for _, m := range tc.match {
			if !match(m) {
				t.Errorf("patternDir(%q) does not match %q", tc.pattern, m)
			}
		}
		for _, m := range tc.nomatch {
			if match(m) {
				t.Errorf("patternDir(%q) matches %q", tc.pattern, m)
			}
		}
	}
}
