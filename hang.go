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
	"strings"
	"syscall"
	"time"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/report"
	"github.com/faultline-dev/faultline/job"
)

func init() { commands["hang"] = cmdHang }

// cmdHang shows where a live, hung process is: it stops the process with
// ptrace just long enough to write a core of it (faultline's own writer),
// analyzes that core (every thread, native and Python frames), and asks
// the CUDA driver for a GPU core dump through the process's
// CUDA_COREDUMP_PIPE when it has one.
func cmdHang(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hang", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("out", "faultline-crashes", "directory for the hang bundle (the core and the report)")
	format := fs.String("format", "text", "report format: text (gdb-like backtraces), markdown or json")
	noGPU := fs.Bool("no-gpu", false, "do not request a GPU core dump")
	jsonOut := fs.Bool("json", false, "same as --format json")
	summary := fs.Bool("summary", false, "with --json: a compact rank summary with the job object (for `faultline job report`)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{errors.New("expected one PID")}
	}
	pid, err := strconv.Atoi(pos[0])
	if err != nil || pid <= 0 {
		return usageError{fmt.Errorf("%q is not a process id", pos[0])}
	}
	if *jsonOut {
		*format = "json"
	}
	if *summary && *format != "json" {
		return usageError{errors.New("--summary goes with --json")}
	}
	bundle := filepath.Join(*out, fmt.Sprintf("hang-%d-%s", pid, time.Now().Format("20060102-150405")))
	if err := os.MkdirAll(bundle, 0o755); err != nil {
		return err
	}
	core := filepath.Join(bundle, "core")
	at := time.Now()
	n, err := liveCore(pid, core)
	if err != nil {
		return fmt.Errorf("process %d: %w", pid, err)
	}
	fmt.Fprintf(stderr, "faultline hang: wrote %s (%d threads; the process was stopped while it was written and runs on)\n", core, n)
	if !*noGPU {
		fmt.Fprintf(stderr, "faultline hang: %s\n", requestGPUCore(pid))
	}
	c, err := analysis.Open(core, analysis.Options{})
	if err != nil {
		return err
	}
	var md bytes.Buffer
	if report.Markdown(&md, c, "") == nil {
		os.WriteFile(filepath.Join(bundle, "report.md"), md.Bytes(), 0o644)
	}
	switch {
	case *summary:
		return job.Write(stdout, job.LiveSummary(c, pid, at, job.Hostname()))
	case *format == "json":
		return report.JSON(stdout, c)
	case *format == "markdown" || *format == "md":
		_, err := stdout.Write(md.Bytes())
		return err
	}
	return report.Text(stdout, c)
}

// requestGPUCore asks the CUDA driver of process pid for a GPU core dump:
// with CUDA_ENABLE_USER_TRIGGERED_COREDUMP=1 the driver creates the named
// pipe CUDA_COREDUMP_PIPE (default corepipe.cuda.HOSTNAME.PID) and writes a
// dump when something writes to it (cuda-gdb documentation, "GPU core dump
// support"). It returns what happened, in a sentence.
func requestGPUCore(pid int) string {
	env := processEnv(pid)
	if env["CUDA_ENABLE_USER_TRIGGERED_COREDUMP"] != "1" {
		return "no GPU core requested: the process was not started with CUDA_ENABLE_USER_TRIGGERED_COREDUMP=1 (faultline run sets it)"
	}
	host, _ := os.Hostname()
	pipe := env["CUDA_COREDUMP_PIPE"]
	if pipe == "" {
		pipe = "corepipe.cuda.%h.%p"
	}
	pipe = strings.NewReplacer("%h", host, "%p", strconv.Itoa(pid), "%%", "%").Replace(pipe)
	if !filepath.IsAbs(pipe) {
		cwd, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
		pipe = filepath.Join(cwd, pipe)
	}
	st, err := os.Stat(pipe)
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return fmt.Sprintf("no GPU core requested: no CUDA coredump pipe at %s (the process has not initialised CUDA?)", pipe)
	}
	// O_NONBLOCK: fail at once (ENXIO) rather than hang when nobody reads.
	f, err := os.OpenFile(pipe, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fmt.Sprintf("no GPU core requested: opening %s: %v", pipe, err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, 1<<20)); err != nil && !errors.Is(err, syscall.EAGAIN) {
		return fmt.Sprintf("GPU core request through %s failed: %v", pipe, err)
	}
	where := env["CUDA_COREDUMP_FILE"]
	if where == "" {
		where = "core_TIME_HOSTNAME_PID.nvcudmp in its working directory"
	}
	return fmt.Sprintf("requested a GPU core dump through %s; the driver writes it to %s", pipe, where)
}

// processEnv reads /proc/PID/environ.
func processEnv(pid int) map[string]string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	env := map[string]string{}
	for _, kv := range strings.Split(string(b), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}
