package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/report"
	"github.com/faultline-dev/faultline/capture"
	"github.com/faultline-dev/faultline/job"
)

var hangCommand = &command{
	name:  "hang",
	args:  "[--json [--summary]] PID",
	short: "all-thread stacks of a live, hung process",
	long: `Hang shows where a live, hung process is: it stops the process with ptrace just
long enough to write a core of it (faultline's own writer), analyzes that core
(every thread, native and Python frames), and asks the CUDA driver for a GPU
core dump through the process's CUDA_COREDUMP_PIPE when it has one. The core
and report.md are kept in a bundle under --out (./faultline-crashes by default).
With --summary, made to be run on every rank of a job, the core is written to
a temporary directory and removed once summarized, unless --out is given.`,
	examples: []string{
		"faultline hang 4242",
		"faultline hang --format markdown --no-gpu 4242",
		"faultline hang --json --summary 4242",
		"faultline hang --json --summary --out cores/ 4242",
	},
	interspersed: true,
	new:          func() runner { return &hangRun{} },
}

// hangRun is one `faultline hang`.
type hangRun struct {
	out     string
	format  formatFlags
	noGPU   bool
	summary bool
}

func (h *hangRun) flags(fs *flag.FlagSet) {
	fs.StringVar(&h.out, "out", "", "directory for the hang bundle, the core and the report (default faultline-crashes; with --summary none is kept unless --out is given)")
	h.format.register(fs, "text", "report format: text (gdb-like backtraces), markdown or json", "same as --format json")
	fs.BoolVar(&h.noGPU, "no-gpu", false, "do not request a GPU core dump")
	fs.BoolVar(&h.summary, "summary", false, "with --json: a compact rank summary with the job object (for `faultline job report`)")
}

// run writes the core of the live process, analyzes it and prints the report.
func (h *hangRun) run(pos []string, stdout, stderr io.Writer) error {
	if len(pos) != 1 {
		return usageError{errors.New("expected one PID")}
	}
	pid, err := strconv.Atoi(pos[0])
	if err != nil || pid <= 0 {
		return usageError{fmt.Errorf("%q is not a process id", pos[0])}
	}
	format, err := h.format.parse()
	if err != nil {
		return err
	}
	if h.summary && format != "json" {
		return usageError{errors.New("--summary goes with --json")}
	}
	bundle, keep, err := h.bundleDir(pid)
	if err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(bundle)
	}
	core := filepath.Join(bundle, "core")
	at := time.Now()
	n, err := capture.LiveCore(pid, core)
	if err != nil {
		return fmt.Errorf("process %d: %w", pid, err)
	}
	if keep {
		fmt.Fprintf(stderr, "faultline hang: wrote %s (%d threads; the process was stopped while it was written and runs on)\n", core, n)
	} else {
		fmt.Fprintf(stderr, "faultline hang: summarized %d threads from a core that is not kept (--out DIR keeps it; the process was stopped while it was written and runs on)\n", n)
	}
	if !h.noGPU {
		fmt.Fprintf(stderr, "faultline hang: %s\n", capture.RequestGPUCore(pid))
	}
	c, err := analysis.Open(core, analysis.Options{})
	if err != nil {
		return err
	}
	var md bytes.Buffer
	if report.Markdown(&md, c, "") == nil && keep {
		path := filepath.Join(bundle, "report.md")
		if err := os.WriteFile(path, md.Bytes(), 0o644); err == nil && format != "markdown" {
			fmt.Fprintf(stderr, "faultline hang: the full report (locks, evidence, next steps) is in %s\n", path)
		}
	}
	switch {
	case h.summary:
		return job.Write(stdout, job.LiveSummary(c, pid, at, job.Hostname()))
	case format == "markdown":
		_, err := stdout.Write(md.Bytes())
		return err
	}
	return writeReport(stdout, c, format)
}

// bundleDir is where the core of pid is written, and whether it is kept:
// a summary (one per rank of a job) keeps nothing unless --out asks for it,
// since a full core per rank in each rank's working directory is rarely
// wanted and can fill a node's disk.
func (h *hangRun) bundleDir(pid int) (dir string, keep bool, err error) {
	if h.summary && h.out == "" {
		dir, err = os.MkdirTemp("", "faultline-hang-")
		return dir, false, err
	}
	out := h.out
	if out == "" {
		out = "faultline-crashes"
	}
	dir = filepath.Join(out, fmt.Sprintf("hang-%d-%s", pid, time.Now().Format("20060102-150405")))
	return dir, true, os.MkdirAll(dir, 0o755)
}
