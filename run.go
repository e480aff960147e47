package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/analysis/report"
)

func init() { commands["run"] = cmdRun }

// RunSchema is the schema of `faultline run --json`.
const RunSchema = "faultline.run/v1"

// runOptions are faultline run's flags.
type runOptions struct {
	repeat  int
	out     string // where crash bundles go
	dir     string // the job's working directory
	json    bool
	command []string
}

// runResult is one run of the job.
type runResult struct {
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

	crash *analysis.Crash
}

// runGroup is one signature's failures.
type runGroup struct {
	Signature string   `json:"signature"`
	Count     int      `json:"count"`
	Runs      []int    `json:"runs"`
	Summary   string   `json:"summary,omitempty"`
	Bundles   []string `json:"bundles"`
}

// runReport is what `faultline run --json` prints.
type runReport struct {
	Schema   string      `json:"schema"`
	Command  []string    `json:"command"`
	Session  string      `json:"session"`
	Runs     int         `json:"runs"`
	Failures int         `json:"failures"`
	Rate     float64     `json:"rate"`
	RateLow  float64     `json:"rateLow"`  // Wilson 95% interval
	RateHigh float64     `json:"rateHigh"` //
	Groups   []runGroup  `json:"groups"`
	Results  []runResult `json:"results"`
}

// cmdRun runs a job with crash capture on: cores enabled and collected,
// faulthandler on, GPU core dumps configured; a failed run leaves a crash
// bundle (logs, core, GPU cores, inventory, report). With --repeat N it
// measures the failure rate and groups failures by signature.
func cmdRun(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o runOptions
	fs.IntVar(&o.repeat, "repeat", 1, "run the job N times and report the failure rate and signature groups")
	fs.StringVar(&o.out, "out", "faultline-crashes", "directory for crash bundles")
	fs.StringVar(&o.dir, "C", "", "run the job in this directory (default: the current one)")
	fs.BoolVar(&o.json, "json", false, "print the runs as JSON (schema "+RunSchema+")")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	o.command = fs.Args()
	if len(o.command) == 0 {
		return usageError{errors.New("expected a command: faultline run [--repeat N] -- CMD ARGS")}
	}
	if o.repeat < 1 || o.repeat > 100000 {
		return usageError{fmt.Errorf("--repeat %d: want 1 to 100000", o.repeat)}
	}
	if o.dir == "" {
		o.dir, _ = os.Getwd()
	}
	session := filepath.Join(o.out, time.Now().Format("20060102-150405.000"))
	if err := os.MkdirAll(session, 0o755); err != nil {
		return err
	}
	session, _ = filepath.Abs(session)
	log := stderr
	if o.json {
		log = io.Discard
	}
	limitNote := raiseCoreLimit()
	if limitNote != "" {
		fmt.Fprintf(log, "faultline run: %s\n", limitNote)
	}
	pattern := readCorePattern()

	rep := runReport{Schema: RunSchema, Command: o.command, Session: session, Runs: o.repeat, Groups: []runGroup{}}
	for i := 1; i <= o.repeat; i++ {
		r, err := runOnce(o, session, i, pattern, o.repeat == 1 && !o.json, stdout, stderr)
		if err != nil {
			return err
		}
		if o.repeat > 1 {
			status := "ok"
			if r.Failed {
				status = "FAILED " + exitText(r) + "  " + r.Signature
			}
			fmt.Fprintf(log, "run %d/%d: %s\n", i, o.repeat, status)
		}
		rep.Results = append(rep.Results, r)
	}
	for _, r := range rep.Results {
		if r.Failed {
			rep.Failures++
		}
	}
	rep.Rate = float64(rep.Failures) / float64(rep.Runs)
	rep.RateLow, rep.RateHigh = wilson(rep.Failures, rep.Runs)
	rep.Groups = groupRuns(rep.Results)
	if err := writeInventory(filepath.Join(session, "inventory.txt"), o); err != nil {
		fmt.Fprintf(log, "faultline run: inventory: %v\n", err)
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	if o.repeat == 1 {
		return printSingleRun(stdout, rep.Results[0], session)
	}
	printRepeat(stdout, rep)
	return nil
}

// runOnce runs the job once; a failed run keeps its bundle, a successful
// one leaves nothing.
func runOnce(o runOptions, session string, i int, pattern corePattern, echo bool, stdout, stderr io.Writer) (runResult, error) {
	r := runResult{Run: i}
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

	cmd := exec.Command(o.command[0], o.command[1:]...)
	cmd.Dir = o.dir
	cmd.Env = captureEnv(os.Environ(), bundle)
	cmd.Stdout, cmd.Stderr = io.Writer(outLog), io.Writer(errLog)
	if echo {
		cmd.Stdout, cmd.Stderr = io.MultiWriter(stdout, outLog), io.MultiWriter(stderr, errLog)
	}
	start := time.Now()
	runErr := cmd.Run()
	r.Seconds = time.Since(start).Seconds()
	if cmd.ProcessState == nil {
		os.RemoveAll(bundle)
		return r, fmt.Errorf("starting %s: %w", o.command[0], runErr)
	}
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
	if ws.Signaled() {
		r.Core, r.CoreNote = pattern.collect(cmd.Process.Pid, o.dir, start, bundle)
	} else {
		r.CoreNote = "the job exited with a status, not a signal: no core"
	}
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
func analyzeRun(r *runResult, bundle string) {
	dump := r.Core
	if dump == "" {
		dump = filepath.Join(bundle, "stderr.log")
	}
	c, err := analysis.Open(dump, analysis.Options{})
	if err != nil && dump == r.Core {
		c, err = analysis.Open(filepath.Join(bundle, "stderr.log"), analysis.Options{})
	}
	r.Signature = exitText(*r)
	if err != nil {
		r.Summary = "nothing to analyze: " + err.Error()
		return
	}
	r.crash = c
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
		} else if cls.CulpritFrame >= 0 {
			if t := crashedThread(c); t != nil && cls.CulpritFrame < len(t.Frames) {
				r.Signature = t.Frames[cls.CulpritFrame].Function
			}
		}
	}
}

func crashedThread(c *analysis.Crash) *analysis.Thread {
	for i := range c.Threads {
		if c.Threads[i].ID == c.CrashingThread {
			return &c.Threads[i]
		}
	}
	return nil
}

// exitText is "SIGSEGV" or "exit 3".
func exitText(r runResult) string {
	if r.Signal != "" {
		return r.Signal
	}
	return fmt.Sprintf("exit %d", r.Exit)
}

// groupRuns groups failed runs by signature, the largest group first.
func groupRuns(results []runResult) []runGroup {
	var groups []runGroup
	index := map[string]int{}
	for _, r := range results {
		if !r.Failed {
			continue
		}
		i, ok := index[r.Signature]
		if !ok {
			i = len(groups)
			index[r.Signature] = i
			groups = append(groups, runGroup{Signature: r.Signature, Summary: r.Summary})
		}
		groups[i].Count++
		groups[i].Runs = append(groups[i].Runs, r.Run)
		groups[i].Bundles = append(groups[i].Bundles, r.Bundle)
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].Count > groups[j].Count })
	if groups == nil {
		groups = []runGroup{}
	}
	return groups
}

// wilson is the Wilson score interval at 95% for k failures in n runs.
func wilson(k, n int) (lo, hi float64) {
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

func printSingleRun(w io.Writer, r runResult, session string) error {
	if !r.Failed {
		fmt.Fprintf(w, "\nfaultline run: the job succeeded (exit 0) in %.1fs, peak RSS %s; nothing kept.\n", r.Seconds, kib(r.PeakRSS))
		os.Remove(session) // empty but for the inventory
		return nil
	}
	fmt.Fprintf(w, "\n== faultline run: the job failed: %s\n", exitText(r))
	cmdExplainExit([]string{strconv.Itoa(r.Exit)}, w, io.Discard)
	fmt.Fprintf(w, "Peak RSS: %s. Ran %.1fs.\n", kib(r.PeakRSS), r.Seconds)
	fmt.Fprintf(w, "Core: %s\n", r.CoreNote)
	if len(r.GPUCores) > 0 {
		fmt.Fprintf(w, "GPU core dumps: %s\n", strings.Join(r.GPUCores, ", "))
	}
	fmt.Fprintf(w, "Bundle: %s (run.txt, stdout.log, stderr.log, report.md, crash.json; inventory.txt next to it)\n\n", r.Bundle)
	if r.crash != nil {
		return report.Markdown(w, r.crash, "")
	}
	fmt.Fprintln(w, r.Summary)
	return nil
}

func printRepeat(w io.Writer, rep runReport) {
	fmt.Fprintf(w, "\n== faultline run: %d runs of %s\n", rep.Runs, strings.Join(rep.Command, " "))
	fmt.Fprintf(w, "Failure rate: %d/%d = %.1f%% (95%% interval %.1f%%-%.1f%%)\n",
		rep.Failures, rep.Runs, 100*rep.Rate, 100*rep.RateLow, 100*rep.RateHigh)
	if rep.Failures == 0 {
		fmt.Fprintf(w, "No failure: if it fails in production, run more (the upper bound above is how rare it could still be).\n")
		return
	}
	if len(rep.Groups) == 1 {
		fmt.Fprintf(w, "Every failure has the same signature: deterministic once it happens.\n")
	} else {
		fmt.Fprintf(w, "%d different signatures: the failure is not one bug in one place (suspect a race or earlier corruption).\n", len(rep.Groups))
	}
	fmt.Fprintf(w, "\n| Count | Signature | Runs | First bundle |\n|---|---|---|---|\n")
	for _, g := range rep.Groups {
		runs := make([]string, len(g.Runs))
		for i, n := range g.Runs {
			runs[i] = strconv.Itoa(n)
		}
		fmt.Fprintf(w, "| %d | `%s` | %s | %s |\n", g.Count, g.Signature, strings.Join(runs, ", "), g.Bundles[0])
	}
	for _, g := range rep.Groups {
		if g.Summary != "" {
			fmt.Fprintf(w, "\n`%s`: %s\n", g.Signature, g.Summary)
		}
	}
	fmt.Fprintf(w, "\nInventory: %s\n", filepath.Join(rep.Session, "inventory.txt"))
}

func kib(k int64) string {
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
func writeRunInfo(path string, o runOptions, r runResult, env []string) {
	var b strings.Builder
	fmt.Fprintf(&b, "command: %s\ndirectory: %s\nexit: %d (%s)\npeak RSS: %s\nseconds: %.3f\ncore: %s\n\nenvironment (capture and relevant):\n",
		strings.Join(o.command, " "), o.dir, r.Exit, exitText(r), kib(r.PeakRSS), r.Seconds, r.CoreNote)
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
func writeInventory(path string, o runOptions) error {
	py := "python3"
	if base := filepath.Base(o.command[0]); strings.HasPrefix(base, "python") {
		py = o.command[0]
	}
	var b strings.Builder
	section := func(title string, name string, args ...string) {
		fmt.Fprintf(&b, "## %s\n$ %s %s\n", title, name, strings.Join(args, " "))
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = o.dir
		out, err := cmd.CombinedOutput()
		b.Write(out)
		if err != nil {
			fmt.Fprintf(&b, "(%v)\n", err)
		}
		b.WriteString("\n")
	}
	section("git HEAD of the working tree", "git", "-C", o.dir, "rev-parse", "HEAD")
	section("working tree changes", "git", "-C", o.dir, "status", "--porcelain=v1", "--untracked-files=no")
	section("Python packages", py, "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check")
	section("Debian packages", "dpkg-query", "-W", "-f=${Package} ${Version}\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
