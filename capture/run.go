package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/analysis/report"
)

// RunSchema is the schema of `faultline run --json`.
const RunSchema = "faultline.run/v1"

// Options say how to run the job.
type Options struct {
	Repeat  int      // runs of the job
	Out     string   // where crash bundles go
	Dir     string   // the job's working directory ("": the current one)
	Command []string // the job: program and arguments
	// Echo copies the job's stdout and stderr to Run's (a single run in a
	// terminal); they are kept in the bundle either way.
	Echo bool
}

// Result is one run of the job.
type Result struct {
	Run      int    `json:"run"`
	Exit     int    `json:"exit"` // the shell's status: 128+N when killed by signal N
	Signal   string `json:"signal,omitempty"`
	Failed   bool   `json:"failed"`
	Bundle   string `json:"bundle,omitempty"`
	Core     string `json:"core,omitempty"`
	CoreNote string `json:"coreNote,omitempty"` // where the core went, or why there is none
	// Signature groups the failures: the model's crash.signature, else the
	// culprit frame's function, else the exit status.
	Signature string   `json:"signature,omitempty"`
	Summary   string   `json:"summary,omitempty"`
	PeakRSS   int64    `json:"peakRssKiB"`
	Seconds   float64  `json:"seconds"`
	GPUCores  []string `json:"gpuCores,omitempty"`
	// ChildCores are the cores the job's other processes left (a crashed
	// worker whose parent then exited with a status).
	ChildCores []ChildCore `json:"childCores,omitempty"`

	// Crash is the analysis of a failed run's core or log, nil when there
	// was nothing to analyze.
	Crash *model.Crash `json:"-"`
}

// Group is one signature's failures.
type Group struct {
	Signature string   `json:"signature"`
	Count     int      `json:"count"`
	Runs      []int    `json:"runs"`
	Summary   string   `json:"summary,omitempty"`
	Bundles   []string `json:"bundles"`
}

// Report is the runs of a job: what `faultline run --json` prints.
type Report struct {
	Schema   string   `json:"schema"`
	Command  []string `json:"command"`
	Session  string   `json:"session"`
	Runs     int      `json:"runs"`
	Failures int      `json:"failures"`
	Rate     float64  `json:"rate"`
	RateLow  float64  `json:"rateLow"`  // Wilson 95% interval
	RateHigh float64  `json:"rateHigh"` //
	Groups   []Group  `json:"groups"`
	Results  []Result `json:"results"`
}

// Run runs the job with crash capture on: cores enabled and collected,
// faulthandler on, GPU core dumps configured; a failed run leaves a crash
// bundle (logs, core, GPU cores, run.txt, report.md, crash.json) in a new
// session directory under o.Out, with inventory.txt next to them. With
// o.Repeat > 1 the report has the failure rate, its Wilson interval, and
// the failures grouped by signature. log receives progress lines.
func Run(o Options, log, stdout, stderr io.Writer) (*Report, error) {
	if o.Dir == "" {
		o.Dir, _ = os.Getwd()
	}
	session := filepath.Join(o.Out, time.Now().Format("20060102-150405.000"))
	if err := os.MkdirAll(session, 0o755); err != nil {
		return nil, err
	}
	session, _ = filepath.Abs(session)
	if limitNote := raiseCoreLimit(); limitNote != "" {
		fmt.Fprintf(log, "faultline run: %s\n", limitNote)
	}
	pattern := ReadCorePattern()
	rep := &Report{Schema: RunSchema, Command: o.Command, Session: session, Runs: o.Repeat, Groups: []Group{}}
	for i := 1; i <= o.Repeat; i++ {
		r, err := runOnce(o, session, i, pattern, stdout, stderr)
		if err != nil {
			return nil, err
		}
		if o.Repeat > 1 {
			status := "ok"
			if r.Failed {
				status = "FAILED " + r.ExitText() + "  " + r.Signature
			}
			fmt.Fprintf(log, "run %d/%d: %s\n", i, o.Repeat, status)
		}
		rep.Results = append(rep.Results, r)
	}
	for _, r := range rep.Results {
		if r.Failed {
			rep.Failures++
		}
	}
	rep.Rate = float64(rep.Failures) / float64(rep.Runs)
	rep.RateLow, rep.RateHigh = Wilson(rep.Failures, rep.Runs)
	rep.Groups = groupRuns(rep.Results)
	if err := writeInventory(filepath.Join(session, "inventory.txt"), o); err != nil {
		fmt.Fprintf(log, "faultline run: inventory: %v\n", err)
	}
	return rep, nil
}

// runOnce runs the job once; a failed run keeps its bundle, a successful
// one leaves nothing.
func runOnce(o Options, session string, i int, pattern CorePattern, stdout, stderr io.Writer) (Result, error) {
	r := Result{Run: i}
	bundle := filepath.Join(session, fmt.Sprintf("run-%03d", i))
	if err := os.MkdirAll(bundle, 0o755); err != nil {
		return r, err
	}
	outLog, err := os.Create(filepath.Join(bundle, "stdout.log"))
	if err != nil {
		return r, err
	}
	defer outLog.Close()
	errLog, err := os.Create(filepath.Join(bundle, "stderr.log"))
	if err != nil {
		return r, err
	}
	defer errLog.Close()

	cmd := exec.Command(o.Command[0], o.Command[1:]...)
	cmd.Dir = o.Dir
	cmd.Env = captureEnv(os.Environ(), bundle)
	cmd.Stdout, cmd.Stderr = io.Writer(outLog), io.Writer(errLog)
	if o.Echo {
		cmd.Stdout, cmd.Stderr = io.MultiWriter(stdout, outLog), io.MultiWriter(stderr, errLog)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		os.RemoveAll(bundle)
		return r, fmt.Errorf("starting %s: %w", o.Command[0], err)
	}
	procs := watchDescendants(cmd.Process.Pid, 100*time.Millisecond)
	cmd.Wait()
	seen := procs.members()
	r.Seconds = time.Since(start).Seconds()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.PeakRSS = ru.Maxrss // KiB on Linux (getrusage(2))
	}
	switch {
	case ws.Signaled():
		r.Signal = model.SignalName(int(ws.Signal()))
		r.Exit = 128 + int(ws.Signal())
	default:
		r.Exit = ws.ExitStatus()
	}
	r.Failed = r.Exit != 0
	if !r.Failed {
		os.RemoveAll(bundle)
		return r, nil
	}
	r.Bundle = bundle
	collectRunCores(&r, pattern, ws.Signaled(), cmd.Process.Pid, seen, o.Dir, start)
	r.GPUCores, _ = filepath.Glob(filepath.Join(bundle, "*.nvcudmp"))
	writeRunInfo(filepath.Join(bundle, "run.txt"), o, r, cmd.Env)
	analyzeRun(&r, bundle)
	return r, nil
}

// captureEnv returns the job's environment with capture turned on. What
// the user already set wins.
func captureEnv(env []string, bundle string) []string {
	set := map[string]bool{}
	for _, kv := range env {
		set[strings.SplitN(kv, "=", 2)[0]] = true
	}
	add := func(k, v string) {
		if !set[k] {
			env = append(env, k+"="+v)
		}
	}
	// faulthandler: every thread's Python stack on a fatal signal, to stderr.
	add("PYTHONFAULTHANDLER", "1")
	// CUDA GPU core dumps (cuda-gdb documentation, "GPU core dump support"):
	// on an exception, lightweight (no global/shared/local memory), into
	// the bundle; and a named pipe for user-triggered dumps (faultline hang).
	add("CUDA_ENABLE_COREDUMP_ON_EXCEPTION", "1")
	add("CUDA_COREDUMP_FILE", filepath.Join(bundle, "gpu.%h.%p.nvcudmp"))
	add("CUDA_ENABLE_LIGHTWEIGHT_COREDUMP", "1")
	add("CUDA_COREDUMP_GENERATION_FLAGS", "skip_nonrelocated_elf_images,skip_global_memory,skip_shared_memory,skip_local_memory")
	add("CUDA_ENABLE_USER_TRIGGERED_COREDUMP", "1")
	add("CUDA_COREDUMP_PIPE", filepath.Join(os.TempDir(), "faultline-cuda-pipe.%h.%p"))
	return env
}

// raiseCoreLimit raises this process's RLIMIT_CORE soft limit to the hard
// limit; the job inherits it. It says what stands in the way, if anything.
func raiseCoreLimit() string {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_CORE, &lim); err != nil {
		return "cannot read the core size limit: " + err.Error()
	}
	if lim.Max == 0 {
		return "the core size hard limit is 0 (ulimit -Hc): no core dumps; raise it in limits.conf or the scheduler's settings"
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_CORE, &lim); err != nil {
		return "cannot raise the core size limit: " + err.Error()
	}
	return ""
}

// analyzeRun opens the run's core (else its stderr, which holds
// faulthandler's output or a traceback) and writes report.md and crash.json.
func analyzeRun(r *Result, bundle string) {
	r.Signature = r.ExitText()
	stderrLog := filepath.Join(bundle, "stderr.log")
	var c *analysis.Crash
	err := errNoCrashReport
	if r.Core != "" {
		c, err = analysis.Open(r.Core, analysis.Options{})
	}
	if st, serr := os.Stat(stderrLog); err != nil && serr == nil && st.Size() > 0 {
		// faulthandler's output or a traceback, when the core is not there
		// or not readable.
		c, err = analysis.Open(stderrLog, analysis.Options{})
	}
	if err != nil {
		r.Summary = "nothing to analyze: " + err.Error()
		return
	}
	r.Crash = c
	var md bytes.Buffer
	if report.Markdown(&md, c, "") == nil {
		os.WriteFile(filepath.Join(bundle, "report.md"), md.Bytes(), 0o644)
	}
	if f, err := os.Create(filepath.Join(bundle, "crash.json")); err == nil {
		report.JSON(f, c)
		f.Close()
	}
	if cls := c.Classification; cls != nil {
		r.Summary = cls.Summary
		if cls.Signature != "" {
			r.Signature = cls.Signature
		} else if f := c.Culprit(); f != nil {
			r.Signature = f.Function
		}
	}
}

// errNoCrashReport is a failed run that left neither a core nor anything
// on stderr to read a crash from.
var errNoCrashReport = errors.New("no core, and the job wrote nothing to stderr (no faulthandler output, traceback or sanitizer report)")

// ExitText is "SIGSEGV" or "exit 3".
func (r Result) ExitText() string {
	if r.Signal != "" {
		return r.Signal
	}
	return fmt.Sprintf("exit %d", r.Exit)
}

// groupRuns groups failed runs by signature, the largest group first.
func groupRuns(results []Result) []Group {
	var groups []Group
	index := map[string]int{}
	for _, r := range results {
		if !r.Failed {
			continue
		}
		i, ok := index[r.Signature]
		if !ok {
			i = len(groups)
			index[r.Signature] = i
			groups = append(groups, Group{Signature: r.Signature, Summary: r.Summary})
		}
		groups[i].Count++
		groups[i].Runs = append(groups[i].Runs, r.Run)
		groups[i].Bundles = append(groups[i].Bundles, r.Bundle)
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].Count > groups[j].Count })
	if groups == nil {
		groups = []Group{}
	}
	return groups
}

// Wilson is the Wilson score interval at 95% for k failures in n runs.
func Wilson(k, n int) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	const z = 1.96
	p, nf := float64(k)/float64(n), float64(n)
	den := 1 + z*z/nf
	center := (p + z*z/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den
	return math.Max(0, center-half), math.Min(1, center+half)
}

// KiB formats a size in KiB as people read it.
func KiB(k int64) string {
	switch {
	case k >= 1<<20:
		return fmt.Sprintf("%.1f GiB", float64(k)/(1<<20))
	case k >= 1<<10:
		return fmt.Sprintf("%.1f MiB", float64(k)/(1<<10))
	}
	return fmt.Sprintf("%d KiB", k)
}

// writeRunInfo records the run: command, directory, status, the capture
// environment.
func writeRunInfo(path string, o Options, r Result, env []string) {
	var b strings.Builder
	fmt.Fprintf(&b, "command: %s\ndirectory: %s\nexit: %d (%s)\npeak RSS: %s\nseconds: %.3f\ncore: %s\n\nenvironment (capture and relevant):\n",
		strings.Join(o.Command, " "), o.Dir, r.Exit, r.ExitText(), KiB(r.PeakRSS), r.Seconds, r.CoreNote)
	for _, kv := range env {
		k := strings.SplitN(kv, "=", 2)[0]
		if strings.HasPrefix(k, "CUDA_") || strings.HasPrefix(k, "PYTHON") || strings.HasPrefix(k, "LD_") ||
			strings.HasSuffix(k, "_VISIBLE_DEVICES") || strings.HasPrefix(k, "NCCL_") || strings.HasPrefix(k, "TORCH") || k == "PATH" {
			fmt.Fprintf(&b, "  %s\n", kv)
		}
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
}

// writeInventory records what the job ran with: git HEAD of its working
// tree, Python packages, Debian packages.
func writeInventory(path string, o Options) error {
	py := "python3"
	if base := filepath.Base(o.Command[0]); strings.HasPrefix(base, "python") {
		py = o.Command[0]
	}
	var b strings.Builder
	section := func(title string, name string, args ...string) {
		fmt.Fprintf(&b, "## %s\n$ %s %s\n", title, name, strings.Join(args, " "))
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = o.Dir
		out, err := cmd.CombinedOutput()
		b.Write(out)
		if err != nil {
			fmt.Fprintf(&b, "(%v)\n", err)
		}
		b.WriteString("\n")
	}
	section("git HEAD of the working tree", "git", "-C", o.Dir, "rev-parse", "HEAD")
	section("working tree changes", "git", "-C", o.Dir, "status", "--porcelain=v1", "--untracked-files=no")
	section("Python packages", py, "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check")
	section("Debian packages", "dpkg-query", "-W", "-f=${Package} ${Version}\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
