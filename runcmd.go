package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/faultline-dev/faultline/analysis/report"
	"github.com/faultline-dev/faultline/capture"
)

var runCommand = &command{
	name:  "run",
	args:  "[--repeat N] -- CMD ARGS...",
	short: "run a job with crash capture on, and analyze what it leaves",
	long: `Run runs a job with crash capture on: core dumps enabled and collected wherever
core_pattern sends them, faulthandler on, GPU core dumps configured. A failed
run leaves a crash bundle (run.txt, stdout.log, stderr.log, the core, GPU cores,
report.md, crash.json; inventory.txt next to it) and its report is printed.
With --repeat N it measures the failure rate (with a 95% Wilson interval) and
groups the failures by signature.

The job's other processes are watched too: the core of a crashed child (a
DataLoader worker, a rank under a launcher) is kept as core.PID. faultline run
exits with the job's status, 128+N for a death by signal N, as a shell reports
it (with --repeat, the first failed run's); 0 when every run succeeded.`,
	examples: []string{
		"faultline run -- ./server --port 8080",
		"faultline run --repeat 50 --out /scratch/crashes -- python3 train.py",
		"faultline run --json -C ./job -- ./flaky",
	},
	new: func() runner { return &runRun{} },
}

// runRun is one `faultline run`.
type runRun struct {
	o    capture.Options
	json bool
}

func (r *runRun) flags(fs *flag.FlagSet) {
	fs.IntVar(&r.o.Repeat, "repeat", 1, "run the job N times and report the failure rate and signature groups")
	fs.StringVar(&r.o.Out, "out", "faultline-crashes", "directory for crash bundles")
	fs.StringVar(&r.o.Dir, "C", "", "run the job in this directory (default: the current one)")
	fs.BoolVar(&r.json, "json", false, "print the runs as JSON (schema "+capture.RunSchema+")")
}

// run runs the job and prints what it left.
func (r *runRun) run(args []string, stdout, stderr io.Writer) error {
	r.o.Command = args
	if len(r.o.Command) == 0 {
		return usageError{errors.New("expected a command: faultline run [--repeat N] -- CMD ARGS")}
	}
	if r.o.Repeat < 1 || r.o.Repeat > 100000 {
		return usageError{fmt.Errorf("--repeat %d: want 1 to 100000", r.o.Repeat)}
	}
	r.o.Echo = r.o.Repeat == 1 && !r.json
	log := stderr
	if r.json {
		log = io.Discard
	}
	rep, err := capture.Run(r.o, log, stdout, stderr)
	if err != nil {
		return err
	}
	switch {
	case r.json:
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	case r.o.Repeat == 1:
		err = printSingleRun(stdout, rep.Results[0], rep.Session)
	default:
		printRepeat(stdout, rep)
	}
	if err != nil {
		return err
	}
	return jobStatusOf(rep)
}

// jobStatus is what faultline run exits with when the job failed: the
// job's own status, 128+N for a death by signal N, as a shell reports it.
type jobStatus int

func (s jobStatus) Error() string { return fmt.Sprintf("the job failed with status %d", int(s)) }

// jobStatusOf is the first failed run's status, nil when every run succeeded.
func jobStatusOf(rep *capture.Report) error {
	for _, r := range rep.Results {
		if r.Failed {
			return jobStatus(r.Exit)
		}
	}
	return nil
}

// printSingleRun prints the one run: how it ended, where its bundle is, its report.
func printSingleRun(w io.Writer, r capture.Result, session string) error {
	if !r.Failed {
		fmt.Fprintf(w, "\nfaultline run: the job succeeded (exit 0) in %.1fs, peak RSS %s; nothing kept.\n", r.Seconds, capture.KiB(r.PeakRSS))
		os.Remove(session) // empty but for the inventory
		return nil
	}
	fmt.Fprintf(w, "\n== faultline run: the job failed: %s\n", r.ExitText())
	// The core, when there is one, is analyzed below: no advice to look for it.
	explainStatus(w, r.Exit, r.Core == "")
	fmt.Fprintf(w, "Peak RSS: %s. Ran %.1fs.\n", capture.KiB(r.PeakRSS), r.Seconds)
	fmt.Fprintf(w, "Core: %s\n", r.CoreNote)
	if len(r.GPUCores) > 0 {
		fmt.Fprintf(w, "GPU core dumps: %s\n", strings.Join(r.GPUCores, ", "))
	}
	fmt.Fprintf(w, "Bundle: %s (%s; inventory.txt next to it)\n\n", r.Bundle, strings.Join(bundleFiles(r.Bundle), ", "))
	if r.Crash != nil {
		return report.Markdown(w, r.Crash, "")
	}
	fmt.Fprintln(w, r.Summary)
	return nil
}

// bundleFiles lists what a bundle holds, as written: the run's record and
// logs first, then the dumps, then the reports.
func bundleFiles(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []string{"unreadable: " + err.Error()}
	}
	rank := func(name string) int {
		for i, first := range []string{"run.txt", "stdout.log", "stderr.log", "core", "report.md", "crash.json"} {
			if name == first || first == "core" && strings.HasPrefix(name, "core") {
				return i
			}
		}
		return 3 // other dumps (GPU cores) with the cores
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.SliceStable(names, func(i, j int) bool {
		if ri, rj := rank(names[i]), rank(names[j]); ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	return names
}

// printRepeat prints the failure rate and the signature groups of repeated runs.
func printRepeat(w io.Writer, rep *capture.Report) {
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
