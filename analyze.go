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

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/classify"
	"github.com/faultline-dev/faultline/analysis/logs"
	"github.com/faultline-dev/faultline/analysis/report"
	"github.com/faultline-dev/faultline/job"
)

var analyzeCommand = &command{
	name:  "analyze",
	args:  "[--format markdown|text|json] [--json [--summary]] [OPEN FLAGS] DUMP... | DIR",
	short: "report on one dump, or group many by signature",
	long: `Analyze reads crash dumps: ELF core dumps, NVIDIA GPU core dumps, and crash
logs (faulthandler output, Python tracebacks, gdb backtraces, compute-sanitizer,
cuda-gdb and PyTorch CUDA errors), plain or compressed (gzip, zstd, xz, lz4).
DUMP "-" reads the dump from standard input.

One dump prints its crash report; several dumps (or a directory of them) are
grouped by signature, with the verdict on whether the crash is deterministic.

` + openFlagsUsage,
	examples: []string{
		"faultline analyze core.1234",
		"faultline analyze --exe ./build/server --debug-dir ./build/debug core.1234.zst",
		"faultline analyze --format text core",
		"faultline analyze --json cores/",
		"faultline analyze --host-core core.4242 gpu.4242.nvcudmp",
		"coredumpctl dump 1234 | faultline analyze --exe ./server -",
	},
	interspersed: true,
	new:          func() runner { return &analyzeRun{} },
}

// analyzeRun is one `faultline analyze`.
type analyzeRun struct {
	format   formatFlags
	summary  bool
	hostCore string
	open     openFlags
}

func (a *analyzeRun) flags(fs *flag.FlagSet) {
	a.format.register(fs, "markdown", "report format: markdown, text (gdb-like backtraces) or json",
		"print the crash model as JSON (schema faultline.crash/v1; faultline.crash-set/v1 for several dumps)")
	fs.BoolVar(&a.summary, "summary", false, "with --json: one compact rank summary per dump (schema faultline.rank-summary/v1, with the job object; for `faultline job report`)")
	fs.StringVar(&a.hostCore, "host-core", "", "with a GPU core dump: the CPU core of the process that launched its kernels (host threads, the launching thread as the crashing one)")
	a.open.register(fs)
}

// run analyzes one dump (the markdown crash report, or the model with
// --json) or several (dumps and directories of dumps, grouped by
// signature, with the verdict on determinism).
func (a *analyzeRun) run(pos []string, stdout, stderr io.Writer) error {
	format, err := a.format.parse()
	if err != nil {
		return err
	}
	of := &a.open
	of.warn = func(msg string) { fmt.Fprintf(stderr, "faultline analyze: warning: %s\n", msg) }
	if len(pos) == 0 {
		return usageError{errors.New("expected a DUMP (or several, or a directory of dumps)")}
	}
	dumps, err := expandDumps(pos)
	if err != nil {
		return err
	}
	if a.summary {
		if format != "json" {
			return usageError{errors.New("--summary goes with --json")}
		}
		return writeSummaries(stdout, dumps, of.options())
	}
	if core, log, ok := sanitizerPair(pos, dumps); ok {
		// A core and AddressSanitizer's report of the same crash.
		opt := of.options()
		opt.SanitizerLog = log
		c, err := analysis.Open(core, opt)
		if err != nil {
			return err
		}
		return writeReport(stdout, c, format)
	}
	single := len(dumps) == 1 && !isDir(pos[0])
	if a.hostCore != "" && !single {
		return usageError{errors.New("--host-core goes with one GPU core dump")}
	}
	if single {
		open := analysis.Open
		if a.hostCore != "" {
			open = func(dump string, opt analysis.Options) (*analysis.Crash, error) {
				return analysis.OpenWithHostCore(dump, a.hostCore, opt)
			}
		}
		c, err := open(dumps[0], of.options())
		if err != nil {
			return err
		}
		return writeReport(stdout, c, format)
	}

	crashes, failed := splitOpened(dumps, openDumps(dumps, of.options()))
	if len(crashes) == 0 {
		return fmt.Errorf("none of the %d dumps could be opened (first: %s)", len(dumps), failed[0].Error)
	}
	set := classify.GroupCrashes(crashes)
	set.Failed = failed
	switch format {
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(set)
	case "text":
		return report.TextSet(stdout, set)
	}
	return report.MarkdownSet(stdout, set)
}

// expandDumps lists the dumps named on the command line: files as given,
// directories by their regular files (not recursively), sorted, except an
// ABRT problem directory, which is one dump.
func expandDumps(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() || analysis.IsProblemDirectory(a) {
			out = append(out, a) // analysis.Open reports a missing file
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, err
		}
		var files []string
		for _, e := range entries {
			if e.Type().IsRegular() && looksLikeDump(e.Name()) {
				files = append(files, filepath.Join(a, e.Name()))
			}
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no dumps in this directory", a)
		}
		sort.Strings(files)
		out = append(out, files...)
	}
	return out, nil
}

// looksLikeDump skips the text files that sit next to cores (gdb logs,
// READMEs); everything else is tried, and what fails to open is reported.
func looksLikeDump(name string) bool {
	switch filepath.Ext(name) {
	case ".txt", ".md", ".json", ".log", ".c", ".cpp", ".h", ".py", ".sh":
		return false
	}
	return true
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// writeSummaries prints one rank summary line per dump (job.Write); a dump
// that does not open fails the command after the others are printed.
func writeSummaries(stdout io.Writer, dumps []string, opt analysis.Options) error {
	var firstErr error
	for i, o := range openDumps(dumps, opt) {
		err := o.err
		if err == nil {
			err = job.Write(stdout, job.CoreSummary(o.crash, dumps[i], job.Hostname()))
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// sanitizerPair recognises `analyze CORE asan.log`: two files, one of them
// a sanitizer's report (its log classifies the other).
func sanitizerPair(pos, dumps []string) (core, log string, ok bool) {
	if len(pos) != 2 || len(dumps) != 2 || isDir(pos[0]) || isDir(pos[1]) {
		return "", "", false
	}
	a, b := isASanLog(dumps[0]), isASanLog(dumps[1])
	switch {
	case a && !b:
		return dumps[1], dumps[0], true
	case b && !a:
		return dumps[0], dumps[1], true
	}
	return "", "", false
}

// isASanLog reports whether the file starts like a sanitizer's report.
func isASanLog(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, head)
	return logs.IsASanReport(head[:n])
}
