package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/slurmtest"
	"github.com/faultline-dev/faultline/job"
)

// TestJobSlurm runs the README's "Many nodes" commands against a real
// one-node Slurm (internal/slurmtest; needs root, as CI runs): a 4-task job
// where rank 2 hangs in another function than the others, and a 4-task
// job where ranks 1 and 2 crash differently. `faultline job collect`
// gathers the summaries through srun --overlap and `faultline job report`
// must name the odd rank with its frames and the two signature groups.
func TestJobSlurm(t *testing.T) {
	c := slurmtest.Start(t)
	inv := invocation{dir: c.Dir, env: []string{"SLURM_CONF=" + c.Conf}, timeout: 90 * time.Second}
	t.Run("hang", func(t *testing.T) { testJobHang(t, c, inv) })
	t.Run("crash", func(t *testing.T) { testJobCrash(t, c, inv) })
}

func testJobHang(t *testing.T, c *slurmtest.Cluster, inv invocation) {
	dir := filepath.Join(c.Work(), "hang")
	os.MkdirAll(dir, 0o755)
	id := c.Sbatch(t, 4, "srun -n 4 -D "+dir+" "+program(t, "hangrank.c"))
	c.WaitFor(t, "4 blocked ranks", func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, "ready.*"))
		return len(m) == 4
	})
	os.RemoveAll(filepath.Join(c.Dir, "ranks"))
	r := example(t, "faultline job collect $SLURM_JOB_ID --out ranks/ --hang", inv, "$SLURM_JOB_ID", id)
	wantExit(t, r, 0)
	wantContains(t, "collect --hang", r.stdout, "collected 4 rank summaries from 1 nodes of job "+id)
	rep := jobReport(t, inv)
	if rep.Ranks != 4 || rep.Missing != "" || len(rep.Classes) != 2 || !slices.Equal(rep.OddOnesOut, []string{"2"}) {
		t.Fatalf("report: ranks %d missing %q oddOnesOut %v classes %+v", rep.Ranks, rep.Missing, rep.OddOnesOut, rep.Classes)
	}
	odd, rest := rep.Classes[0], rep.Classes[1]
	if odd.Ranks != "2" || !slices.Contains(odd.Frames, "compute_stuck") || slices.Contains(odd.Frames, "collective_wait") ||
		!slices.Contains(odd.Frames, "main") || !slices.Equal(odd.Hosts, []string{"fl1"}) {
		t.Errorf("odd class = %+v, want rank 2 on fl1 in compute_stuck", odd)
	}
	if rest.Ranks != "0-1,3" || rest.Count != 3 || !slices.Contains(rest.Frames, "collective_wait") {
		t.Errorf("largest class = %+v, want ranks 0-1,3 in collective_wait", rest)
	}
	r = example(t, "faultline job report ranks/", inv)
	wantExit(t, r, 0)
	t.Logf("faultline job report ranks/:\n%s", r.stdout)
	wantContains(t, "markdown report", r.stdout, "# Job report: 4 ranks, 4 summarized", "## Odd ones out\n\n- rank 2 on fl1: ",
		"`compute_stuck` ← `main`", "### 2. ranks 0-1,3 (3)", "| fl1 | 0-3 | 4 |", "  collective_wait [0-1,3] 3")
	// The ranks were left running.
	for rank := 0; rank < 4; rank++ {
		sums, err := job.LoadFile(filepath.Join(c.Dir, "ranks", fmt.Sprintf("rank-%05d.json", rank)))
		if err != nil {
			t.Fatal(err)
		}
		if in := sums[0].Job; in.Source != "live" || in.JobID != id || in.PID == 0 || syscall.Kill(in.PID, 0) != nil {
			t.Errorf("rank %d: job object %+v; want the live process of job %s, still running", rank, in, id)
		}
	}
}

func testJobCrash(t *testing.T, c *slurmtest.Cluster, inv invocation) {
	dir := filepath.Join(c.Work(), "crash")
	os.MkdirAll(dir, 0o755)
	// Each task in its own directory, so the kernel's "core" files do not
	// overwrite each other; the batch script keeps the allocation after.
	id := c.Sbatch(t, 4, "srun -n 4 -D "+dir+" bash -c 'mkdir -p r$SLURM_PROCID && cd r$SLURM_PROCID && exec "+
		program(t, "crashrank.c")+"'; touch "+dir+"/step-done; sleep 300")
	c.WaitFor(t, "the crashing step", func() bool { _, err := os.Stat(filepath.Join(dir, "step-done")); return err == nil })
	os.RemoveAll(filepath.Join(c.Dir, "ranks"))
	// Cores where core_pattern puts them: a relative "core" is in the
	// tasks' working directories, under the job's.
	r := example(t, "faultline job collect $SLURM_JOB_ID --out ranks/", inv, "$SLURM_JOB_ID", id)
	if r.code != 0 || !strings.Contains(r.stdout, "collected 2 rank summaries") {
		b, _ := os.ReadFile(c.Path("log/job-" + id + ".out"))
		pattern, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
		t.Fatalf("job collect (core_pattern %q): %s\njob output:\n%s", pattern, r, b)
	}
	rep := jobReport(t, inv)
	if rep.Ranks != 4 || rep.Missing != "0,3" || len(rep.Signatures) != 2 {
		t.Fatalf("report: ranks %d missing %q signatures %+v", rep.Ranks, rep.Missing, rep.Signatures)
	}
	want := map[string]string{"1": "write_result", "2": "check_invariant"}
	for _, g := range rep.Signatures {
		fn := want[g.Ranks]
		if fn == "" || !strings.Contains(g.Signature, fn) || g.FirstHost != "fl1" || g.FirstTime.IsZero() ||
			strconv.Itoa(g.FirstRank) != g.Ranks {
			t.Errorf("signature group %+v, want rank %s with %s", g, g.Ranks, fn)
		}
	}
	for _, cl := range rep.Classes {
		if fn := want[cl.Ranks]; fn == "" || !slices.Contains(cl.Frames, fn) || cl.Signature == "" {
			t.Errorf("class %+v, want rank 1 or 2 with its crash frames", cl)
		}
	}
	// The same through --cores, as on a machine whose core_pattern pipes
	// cores elsewhere.
	os.RemoveAll(filepath.Join(c.Dir, "ranks"))
	r = faultline(t, inv, "job", "collect", id, "--out", "ranks/", "--cores", dir)
	wantExit(t, r, 0)
	wantContains(t, "collect --cores", r.stdout, "collected 2 rank summaries")
}

func jobReport(t *testing.T, inv invocation) *job.Report {
	t.Helper()
	r := example(t, "faultline job report --json ranks/", inv)
	wantExit(t, r, 0)
	t.Logf("faultline job report --json ranks/:\n%s", r.stdout)
	var rep job.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("job report --json: %v\n%s", err, r.stdout)
	}
	return &rep
}

// TestJobSummaryOf256Threads: `faultline hang --json --summary` of a live
// 257-thread process (testdata/threads.c) is one line of at most 64 KiB
// holding every thread, with the job object read from the process's
// environment; `faultline analyze --json --summary` of the core hang wrote
// reads the same job object from the core's own stack. Without --out the
// summary keeps no core; with it the bundle is written there.
func TestJobSummaryOf256Threads(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(program(t, "threads.c", "-pthread"))
	cmd.Env = append(os.Environ(), "RANK=5", "LOCAL_RANK=1", "WORLD_SIZE=8", "SLURM_JOB_ID=77", "SLURM_PROCID=5", "SLURMD_NODENAME=node7")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
		t.Fatalf("threads program said %q", line)
	}
	pid := cmd.Process.Pid
	inv := invocation{dir: dir}
	r := faultline(t, inv, "hang", "--json", "--summary", "--no-gpu", strconv.Itoa(pid))
	wantExit(t, r, 0)
	if n := len(r.stdout); n > 64<<10 || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("summary is %d bytes on %d lines, want one line of at most 64 KiB", n, strings.Count(r.stdout, "\n"))
	}
	s, err := job.Decode([]byte(r.stdout))
	if err != nil {
		t.Fatal(err)
	}
	checkThreadsSummary(t, s, pid, "live")
	for _, p := range s.Problems {
		if strings.Contains(p.Message, "left out") {
			t.Errorf("summary had to leave things out: %s", p.Message)
		}
	}
	wantContains(t, "hang --summary without --out", r.stderr, "not kept")
	if _, err := os.Stat(filepath.Join(dir, "faultline-crashes")); !os.IsNotExist(err) {
		t.Errorf("hang --summary without --out left a bundle in the working directory (stat: %v)", err)
	}
	r = faultline(t, inv, "hang", "--json", "--summary", "--no-gpu", "--out", "kept", strconv.Itoa(pid))
	wantExit(t, r, 0)
	cores, _ := filepath.Glob(filepath.Join(dir, "kept", "hang-*", "core"))
	if len(cores) != 1 {
		t.Fatalf("hang --summary --out kept: bundle cores %v", cores)
	}
	r = faultline(t, inv, "analyze", "--json", "--summary", cores[0])
	wantExit(t, r, 0)
	fromCore, err := job.Decode([]byte(r.stdout))
	if err != nil {
		t.Fatal(err)
	}
	checkThreadsSummary(t, fromCore, pid, "core")
	full := faultline(t, inv, "analyze", "--json", cores[0])
	if len(full.stdout) < 4*len(r.stdout) {
		t.Errorf("full model %d bytes, summary %d: the summary should be far smaller", len(full.stdout), len(r.stdout))
	}
	t.Logf("257 threads: summary %d bytes, full crash model %d bytes", len(r.stdout), len(full.stdout))
	r = faultline(t, inv, "hang", "--summary", strconv.Itoa(pid))
	wantExit(t, r, 2)
	wantContains(t, "hang --summary without --json", r.stderr, "--summary goes with --json")
}

func checkThreadsSummary(t *testing.T, s *job.Summary, pid int, source string) {
	t.Helper()
	in := s.Job
	if r, ok := in.GlobalRank(); !ok || r != 5 || in.WorldSize == nil || *in.WorldSize != 8 || in.LocalRank == nil || *in.LocalRank != 1 ||
		in.JobID != "77" || in.Hostname != "node7" || in.PID != pid || in.Source != source || in.Time.IsZero() {
		b, _ := json.Marshal(in)
		t.Errorf("%s job object %s, want rank 5 of 8, local rank 1, job 77 on node7, pid %d", source, b, pid)
	}
	threads := 0
	parks := map[string]bool{}
	for _, st := range s.Stacks {
		threads += len(st.Threads)
		for _, f := range st.Frames {
			if fn := s.Frames[f].Function; strings.HasPrefix(fn, "park_") {
				parks[fn] = true
			}
		}
	}
	if s.ThreadCount != 257 || threads != 257 || len(parks) != 16 || len(s.Stacks) < 100 {
		t.Errorf("%s summary: %d threads (%d in stacks), %d park functions, %d stacks; want 257, 257, 16, >= 100",
			source, s.ThreadCount, threads, len(parks), len(s.Stacks))
	}
}

// TestJobUsage: the job command's help, usage errors (exit 2) and a
// directory with nothing to merge (exit 1).
func TestJobUsage(t *testing.T) {
	inv := invocation{}
	r := faultline(t, inv, "job", "help")
	wantExit(t, r, 0)
	wantContains(t, "job help", r.stdout, "faultline job collect JOBID --out DIR", "faultline job report [--json] DIR")
	r = faultline(t, inv, "job")
	wantExit(t, r, 2)
	wantContains(t, "job without a command", r.stderr, "expected collect, report or local")
	r = faultline(t, inv, "job", "collect", "17")
	wantExit(t, r, 2)
	wantContains(t, "collect without --out", r.stderr, "--out DIR is required")
	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "rank-00000.json"), []byte(`{"schema": "faultline.rank-summary/v1", "job": `), 0o644)
	r = faultline(t, inv, "job", "report", empty)
	wantExit(t, r, 1)
	wantContains(t, "report of a directory without summaries", r.stderr, "no rank summary could be merged (1 files with problems)",
		"rank-00000.json: truncated: the JSON ends early")
}
