package job

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CollectOptions is `faultline job collect`.
type CollectOptions struct {
	JobID  string
	OutDir string
	Hang   bool
	// CoresDir is searched on every node instead of core_pattern's directory.
	CoresDir string
	// Faultline is the faultline binary the nodes run (this one by default:
	// it must be at the same path on every node).
	Faultline string
	Srun      string // "srun" by default
	Scontrol  string // "scontrol" by default
	Timeout   time.Duration
	Stderr    io.Writer
}

// CollectResult is what a collection wrote.
type CollectResult struct {
	Files    []string
	Nodes    int
	Problems []string
}

// maxSummaryLine caps one summary line read back from srun.
const maxSummaryLine = 4 * maxSummaryBytes

// Collect runs `faultline job local` on every node of the job with one
// `srun --jobid=ID --overlap --ntasks-per-node=1` step, so the nodes work
// at once and the collection takes as long as the slowest node. Every
// summary line the nodes print becomes one file per rank in OutDir.
func Collect(ctx context.Context, opt CollectOptions) (*CollectResult, error) {
	if err := ValidJobID(opt.JobID); err != nil {
		return nil, err
	}
	info, err := showJob(ctx, opt)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opt.OutDir, 0o755); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	args := []string{"--jobid=" + opt.JobID, "--overlap", "--ntasks-per-node=1", "--kill-on-bad-exit=0",
		"--nodes=" + info["NumNodes"], "--job-name=faultline-collect",
		opt.Faultline, "job", "local", opt.JobID, "--workdir", info["WorkDir"]}
	if t, err := time.ParseInLocation("2006-01-02T15:04:05", info["StartTime"], time.Local); err == nil {
		args = append(args, "--since", t.UTC().Format(time.RFC3339))
	}
	if opt.Hang {
		args = append(args, "--hang")
	}
	if opt.CoresDir != "" {
		args = append(args, "--cores", opt.CoresDir)
	}
	cmd := exec.CommandContext(ctx, opt.Srun, args...)
	cmd.Stderr = opt.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", opt.Srun, err)
	}
	res := &CollectResult{}
	res.Nodes, _ = strconv.Atoi(info["NumNodes"])
	readSummaries(stdout, opt.OutDir, res)
	if err := cmd.Wait(); err != nil {
		res.Problems = append(res.Problems, fmt.Sprintf("%s: %v", opt.Srun, err))
	}
	return res, nil
}

// showJob reads `scontrol show job -o ID` into its KEY=VALUE fields.
func showJob(ctx context.Context, opt CollectOptions) (map[string]string, error) {
	out, err := exec.CommandContext(ctx, opt.Scontrol, "show", "job", "-o", opt.JobID).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("job %s: %s", opt.JobID, strings.TrimSpace(string(ee.Stderr)))
		}
		return nil, fmt.Errorf("%s: %w", opt.Scontrol, err)
	}
	fields := map[string]string{}
	for _, f := range strings.Fields(string(out)) {
		if k, v, ok := strings.Cut(f, "="); ok {
			if _, dup := fields[k]; !dup {
				fields[k] = v
			}
		}
	}
	if fields["JobState"] != "RUNNING" {
		return nil, fmt.Errorf("job %s is %s, not running: srun --overlap can only reach a running job's nodes", opt.JobID, fields["JobState"])
	}
	return fields, nil
}

// readSummaries writes each summary line to OutDir as rank-NNNNN.json (or
// HOST-PID.json for a process without a rank).
func readSummaries(r io.Reader, dir string, res *CollectResult) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxSummaryLine)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		s, err := Decode(line)
		if err != nil {
			res.Problems = append(res.Problems, fmt.Sprintf("line %d from the nodes: %v", n, err))
			continue
		}
		name := fmt.Sprintf("%s-%d.json", s.Job.Hostname, s.Job.PID)
		if r, ok := s.Job.GlobalRank(); ok {
			name = fmt.Sprintf("rank-%05d.json", r)
		}
		path := filepath.Join(dir, filepath.Base(name))
		if err := writeFileAtomic(path, append(line, '\n')); err != nil {
			res.Problems = append(res.Problems, err.Error())
			continue
		}
		res.Files = append(res.Files, path)
	}
	if err := sc.Err(); err != nil {
		res.Problems = append(res.Problems, fmt.Sprintf("reading the nodes' output: %v", err))
	}
}

// writeFileAtomic writes path through a new temporary file in its
// directory (O_EXCL, a random name: a file or symlink planted there is
// never opened) renamed over path (rename replaces a symlink at path, it
// does not follow it).
func writeFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp") // hidden: skipped by MergeDir
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
