package job

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/faultline-dev/faultline/analysis"
)

// Usage is the `faultline job` help text.
const Usage = `faultline job — a crashed or hung multi-node job, triaged through Slurm

usage:
  faultline job collect JOBID --out DIR [--hang] [--cores DIR] [--faultline PATH] [--timeout DUR]
        run faultline on every node of the running job (srun --jobid=JOBID --overlap
        --ntasks-per-node=1), over the job's cores (kernel.core_pattern, coredumpctl,
        or --cores DIR) or, with --hang, its live processes; one summary file per rank
  faultline job report [--json] DIR
        merge the per-rank summaries like STAT: equivalence classes of ranks (odd ones
        out first), crash signature groups, placement, the call-prefix tree
  faultline job local JOBID [--hang] [--cores DIR] [--workdir DIR] [--since TIME]
        this node's part of collect: one summary line per rank on stdout
`

// UsageError is a command line that does not parse.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }

// Main runs `faultline job ARGS`. snap writes a live process's core (for
// --hang).
func Main(args []string, stdout, stderr io.Writer, snap Snapshotter) error {
	if len(args) == 0 {
		return &UsageError{errors.New("expected collect, report or local")}
	}
	switch args[0] {
	case "report":
		return cmdReport(args[1:], stdout, stderr)
	case "collect":
		return cmdCollect(args[1:], stdout, stderr)
	case "local":
		return cmdLocal(args[1:], stdout, stderr, snap)
	case "help", "-h", "--help":
		_, err := io.WriteString(stdout, Usage)
		return err
	}
	return &UsageError{fmt.Errorf("unknown job command %q (collect, report or local)", args[0])}
}

// parseArgs parses flags placed before, between or after the positional
// arguments, and checks their number.
func parseArgs(fs *flag.FlagSet, args []string, want int, what string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, &UsageError{err}
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) != want {
		return nil, &UsageError{fmt.Errorf("expected %s", what)}
	}
	return pos, nil
}

func cmdReport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("job report", flag.ContinueOnError)
	jsonOut := fs.Bool("json", false, "print the merged report as JSON")
	pos, err := parseArgs(fs, args, 1, "one DIR of per-rank summaries")
	if err != nil {
		return err
	}
	rep, err := MergeDir(pos[0])
	if err != nil {
		return err
	}
	if len(rep.Classes) == 0 {
		for _, p := range rep.Problems {
			fmt.Fprintf(stderr, "faultline job report: %s: %s\n", p.File, p.Message)
		}
		return fmt.Errorf("%s: no rank summary could be merged (%d files with problems)", pos[0], len(rep.Problems))
	}
	if *jsonOut {
		return rep.JSON(stdout)
	}
	return rep.Markdown(stdout)
}

func cmdCollect(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("job collect", flag.ContinueOnError)
	opt := CollectOptions{Stderr: stderr, Srun: "srun", Scontrol: "scontrol"}
	fs.StringVar(&opt.OutDir, "out", "", "directory for the per-rank summary files")
	fs.BoolVar(&opt.Hang, "hang", false, "summarize the job's live processes instead of its cores")
	fs.StringVar(&opt.CoresDir, "cores", "", "directory (on every node) holding the job's cores")
	fs.StringVar(&opt.Faultline, "faultline", "", "faultline binary on the nodes (default: this one's path)")
	fs.DurationVar(&opt.Timeout, "timeout", 10*time.Minute, "give up on the nodes after this long")
	pos, err := parseArgs(fs, args, 1, "one Slurm JOBID")
	if err != nil {
		return err
	}
	if opt.OutDir == "" {
		return &UsageError{errors.New("--out DIR is required")}
	}
	opt.JobID = pos[0]
	if err := ValidJobID(opt.JobID); err != nil {
		return err
	}
	if opt.Faultline == "" {
		if opt.Faultline, err = os.Executable(); err != nil {
			return err
		}
	}
	start := time.Now()
	res, err := Collect(context.Background(), opt)
	if err != nil {
		return err
	}
	for _, p := range res.Problems {
		fmt.Fprintf(stderr, "faultline job collect: %s\n", p)
	}
	fmt.Fprintf(stdout, "collected %d rank summaries from %d nodes of job %s into %s in %.1fs\n",
		len(res.Files), res.Nodes, opt.JobID, opt.OutDir, time.Since(start).Seconds())
	if len(res.Files) == 0 {
		return fmt.Errorf("job %s: no rank summaries collected", opt.JobID)
	}
	return nil
}

func cmdLocal(args []string, stdout, stderr io.Writer, snap Snapshotter) error {
	fs := flag.NewFlagSet("job local", flag.ContinueOnError)
	var opt NodeOptions
	fs.BoolVar(&opt.Hang, "hang", false, "summarize the job's live processes instead of its cores")
	fs.StringVar(&opt.Dir, "cores", "", "directory holding the job's cores")
	fs.StringVar(&opt.WorkDir, "workdir", "", "the job's working directory (where a relative core_pattern puts cores)")
	since := fs.String("since", "", "ignore cores older than this time (RFC 3339)")
	offline := fs.Bool("offline", false, "no network: do not ask debuginfod servers")
	pos, err := parseArgs(fs, args, 1, "one Slurm JOBID")
	if err != nil {
		return err
	}
	opt.JobID, opt.Snapshot, opt.Open = pos[0], snap, analysis.Options{Offline: *offline}
	if err := ValidJobID(opt.JobID); err != nil {
		return err
	}
	if *since != "" {
		if opt.Since, err = time.Parse(time.RFC3339, *since); err != nil {
			return &UsageError{fmt.Errorf("--since: %v", err)}
		}
	}
	if opt.WorkDir == "" {
		opt.WorkDir, _ = os.Getwd()
	}
	_, err = SummarizeNode(stdout, stderr, opt)
	return err
}
