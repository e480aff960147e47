package job

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/faultline-dev/faultline/analysis"
)

// Snapshotter writes a core of live process pid to path while the process
// keeps running, and returns its thread count (`faultline hang`'s writer).
type Snapshotter func(pid int, path string) (int, error)

// Hostname is this node's name as Slurm knows it (SLURMD_NODENAME, set in
// every task), else the machine's host name.
func Hostname() string {
	if h := os.Getenv("SLURMD_NODENAME"); h != "" {
		return h
	}
	h, _ := os.Hostname()
	return h
}

// CoreSummary summarizes an opened core, with the job object read from
// the core's own environment and its time from the file's mtime.
func CoreSummary(c *analysis.Crash, path, host string) *Summary {
	env, _ := CoreEnv(path)
	in := InfoFromEnv(env, host)
	in.Source = "core"
	if st, err := os.Stat(path); err == nil {
		in.Time = st.ModTime().UTC()
	}
	return Summarize(c, in)
}

// LiveSummary summarizes the core written at time at of live process pid,
// with the job object from its /proc/PID/environ.
func LiveSummary(c *analysis.Crash, pid int, at time.Time, host string) *Summary {
	env, _ := ProcessEnv(pid)
	in := InfoFromEnv(env, host)
	in.Source, in.Time, in.PID = "live", at.UTC(), pid
	return Summarize(c, in)
}

// SummarizeCore opens a core and summarizes it (CoreSummary).
func SummarizeCore(path string, opt analysis.Options, host string) (*Summary, error) {
	c, err := analysis.Open(path, opt)
	if err != nil {
		return nil, err
	}
	return CoreSummary(c, path, host), nil
}

// SummarizeLive snapshots live process pid into a core in tmp, summarizes
// it (LiveSummary), and removes the core.
func SummarizeLive(pid int, snap Snapshotter, tmp, host string) (*Summary, error) {
	if _, err := ProcessEnv(pid); err != nil {
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	core := filepath.Join(tmp, "live-"+strconv.Itoa(pid)+".core")
	defer os.Remove(core)
	at := time.Now()
	if _, err := snap(pid, core); err != nil {
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	c, err := analysis.Open(core, analysis.Options{})
	if err != nil {
		return nil, err
	}
	c.Dump.Path = "/proc/" + strconv.Itoa(pid)
	return LiveSummary(c, pid, at, host), nil
}

// NodeOptions is one node's part of `faultline job collect`.
type NodeOptions struct {
	CoreSearch
	// Hang summarizes the job's live processes instead of its cores.
	Hang     bool
	Snapshot Snapshotter
	Open     analysis.Options
}

// SummarizeNode writes one summary line per rank of the job on this node
// (its cores, or its live processes with Hang) to out, and what it could
// not summarize to errOut. It returns how many summaries it wrote.
func SummarizeNode(out, errOut io.Writer, opt NodeOptions) (int, error) {
	host := Hostname()
	tmp, err := os.MkdirTemp("", "faultline-job-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	var work []func() (*Summary, error)
	if opt.Hang {
		pids, notes := JobProcesses(opt.JobID)
		report(errOut, host, notes)
		for _, pid := range pids {
			work = append(work, func() (*Summary, error) { return SummarizeLive(pid, opt.Snapshot, tmp, host) })
		}
	} else {
		cores, notes := FindCores(opt.CoreSearch, tmp)
		report(errOut, host, notes)
		for _, c := range cores {
			work = append(work, func() (*Summary, error) { return SummarizeCore(c, opt.Open, host) })
		}
	}
	var mu sync.Mutex
	written := 0
	runBounded(len(work), func(i int) {
		s, err := work[i]()
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			fmt.Fprintf(errOut, "faultline job: %s: %v\n", host, err)
			return
		}
		if Write(out, s) == nil {
			written++
		}
	})
	if len(work) == 0 {
		what := "cores"
		if opt.Hang {
			what = "live processes"
		}
		fmt.Fprintf(errOut, "faultline job: %s: no %s of job %s here\n", host, what, opt.JobID)
	}
	return written, nil
}

func report(w io.Writer, host string, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(w, "faultline job: %s: %s\n", host, n)
	}
}

// runBounded runs fn(0..n-1), up to half the CPUs (at least one) at a time:
// each summary unwinds a whole process.
func runBounded(n int, fn func(i int)) {
	sem := make(chan struct{}, max(1, runtime.NumCPU()/2))
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(i)
		}()
	}
	wg.Wait()
}

// JobProcesses lists the ranks of job jobID running on this node: the
// processes of the job's steps (SLURM_JOB_ID and SLURM_STEP_ID in their
// environment, the batch script and our own step excluded), the innermost
// one where a task's wrapper started the rank as a child.
func JobProcesses(jobID string) ([]int, []string) {
	self := os.Getenv("SLURM_STEP_ID")
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, []string{err.Error()}
	}
	procs := map[int]proc{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := ProcessEnv(pid)
		if err != nil || env["SLURM_JOB_ID"] != jobID || env["SLURM_STEP_ID"] == "" || env["SLURM_STEP_ID"] == self {
			continue
		}
		in := InfoFromEnv(env, "")
		r, _ := in.GlobalRank()
		procs[pid] = proc{pid: pid, ppid: parentPID(pid), comm: comm(pid), key: env["SLURM_STEP_ID"] + "/" + strconv.Itoa(r),
			framework: in.Rank != nil || in.OMPIRank != nil || in.PMIRank != nil}
	}
	pids := innermost(procs)
	return pids, []string{fmt.Sprintf("%d live processes of job %s", len(pids), jobID)}
}

// proc is one process of a job: its parent, command name and step/rank
// key, and whether a framework set its rank (RANK, OMPI_COMM_WORLD_RANK,
// PMI_RANK) rather than only Slurm (SLURM_PROCID).
type proc struct {
	pid, ppid int
	comm      string
	key       string
	framework bool
}

// wrappers are the commands that start a rank and wait for it.
var wrappers = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true,
	"env": true, "timeout": true, "numactl": true, "taskset": true, "nice": true, "stdbuf": true, "time": true}

// innermost picks the ranks' processes: a launcher (torchrun, mpirun: no
// framework rank, children with one) and a wrapper of the same step and
// rank (a shell, numactl, ...) give way to the ranks they started, and a
// process a rank forked (a data loader worker) to the rank.
func innermost(procs map[int]proc) []int {
	drop := map[int]bool{}
	for _, q := range procs {
		p, ok := procs[q.ppid]
		switch {
		case !ok:
			continue
		case !p.framework && q.framework:
			drop[p.pid] = true
			continue
		case p.key != q.key:
			continue
		}
		if wrappers[p.comm] {
			drop[p.pid] = true
		} else {
			drop[q.pid] = true
		}
	}
	var pids []int
	for pid := range procs {
		if !drop[pid] {
			pids = append(pids, pid)
		}
	}
	sort.Ints(pids)
	return pids
}

// comm reads a process's command name.
func comm(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return strings.TrimSpace(string(b))
}

// parentPID reads the parent of pid from /proc/PID/stat.
func parentPID(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	var state string
	var ppid int
	fmt.Sscanf(s[i+1:], " %s %d", &state, &ppid)
	return ppid
}
