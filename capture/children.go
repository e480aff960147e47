package capture

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/faultline-dev/faultline/analysis/elfcore"
)

// ChildCore is the core a process of the job other than the job itself
// left: a DataLoader worker, an MPI rank under a launcher, a forked helper.
type ChildCore struct {
	Path    string `json:"path"`    // in the bundle
	PID     int    `json:"pid"`     // the crashed process
	PPID    int    `json:"ppid"`    // its parent when it crashed
	Command string `json:"command"` // its pr_fname
}

// descendants records the processes of a job while it runs: every process
// whose parent chain leads to the job, seen by scanning /proc.
type descendants struct {
	root int
	mu   sync.Mutex
	pids map[int]bool
	stop chan struct{}
	done chan struct{}
}

// watchDescendants starts recording root's descendants every interval
// until stop is called.
func watchDescendants(root int, interval time.Duration) *descendants {
	d := &descendants{root: root, pids: map[int]bool{root: true}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(d.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			d.scan()
			select {
			case <-d.stop:
				return
			case <-t.C:
			}
		}
	}()
	return d
}

// scan adds the processes whose parent is a known member, until no new one appears.
func (d *descendants) scan() {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	parents := map[int]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		parents[pid] = readProcIDs(pid).PPid
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for added := true; added; {
		added = false
		for pid, ppid := range parents {
			if !d.pids[pid] && d.pids[ppid] {
				d.pids[pid], added = true, true
			}
		}
	}
}

// members stops the watch and returns the pids seen.
func (d *descendants) members() map[int]bool {
	close(d.stop)
	<-d.done
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.pids
}

// collectRunCores finds the cores a failed run left: the job's own when a
// signal ended it, and those of its other processes. When the job left
// none, the first child's core is the one analyzed.
func collectRunCores(r *Result, cp CorePattern, signaled bool, job int, seen map[int]bool, cwd string, start time.Time) {
	if signaled {
		r.Core, r.CoreNote = cp.collect(job, cwd, start, r.Bundle)
	} else {
		r.CoreNote = fmt.Sprintf("the job exited with status %d, not by a signal: no core of its own", r.Exit)
	}
	r.ChildCores = cp.collectChildCores(job, seen, cwd, start, r.Bundle)
	if len(r.ChildCores) > 0 && r.Core == "" {
		c := r.ChildCores[0]
		r.Core = c.Path
		r.CoreNote += fmt.Sprintf("; its child process %d (%s) crashed and left a core, moved into the bundle as %s",
			c.PID, c.Command, filepath.Base(c.Path))
	}
	for _, c := range r.ChildCores {
		if c.Path != r.Core {
			r.CoreNote += fmt.Sprintf("; process %d (%s) left %s too", c.PID, c.Command, filepath.Base(c.Path))
		}
	}
}

// collectChildCores finds the cores that the job's other processes dumped
// since start (core_pattern written to files; a pipe helper's cores are not
// searched) and moves them into the bundle as core.PID. A core belongs to
// the job when its process was seen as a descendant, or its parent was the
// job or another of these crashed processes.
func (cp CorePattern) collectChildCores(job int, seen map[int]bool, cwd string, start time.Time, bundle string) []ChildCore {
	if strings.HasPrefix(cp.Pattern, "|") {
		return nil
	}
	glob := cp.globAnyPID()
	if !filepath.IsAbs(glob) {
		glob = filepath.Join(cwd, glob)
	}
	matches, _ := filepath.Glob(glob)
	type candidate struct {
		path           string
		pid, ppid      int
		command        string
		modified       time.Time
		alreadyClaimed bool
	}
	var cands []candidate
	for _, m := range matches {
		st, err := os.Stat(m)
		if err != nil || !st.Mode().IsRegular() || st.ModTime().Before(start.Add(-time.Second)) {
			continue
		}
		c, err := elfcore.Open(m)
		if err != nil {
			continue
		}
		if c.Process != nil && c.Process.PID != job {
			cands = append(cands, candidate{path: m, pid: c.Process.PID, ppid: c.Process.PPID, command: c.Process.Fname, modified: st.ModTime()})
		}
		c.Close()
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].modified.Before(cands[j].modified) })
	ours := map[int]bool{job: true}
	for pid := range seen {
		ours[pid] = true
	}
	var out []ChildCore
	for added := true; added; {
		added = false
		for i := range cands {
			c := &cands[i]
			if c.alreadyClaimed || !ours[c.pid] && !ours[c.ppid] {
				continue
			}
			c.alreadyClaimed, ours[c.pid], added = true, true, true
			dst := filepath.Join(bundle, fmt.Sprintf("core.%d", c.pid))
			if err := moveFile(c.path, dst); err != nil {
				dst = c.path
			}
			out = append(out, ChildCore{Path: dst, PID: c.pid, PPID: c.ppid, Command: c.command})
		}
	}
	return out
}

// globAnyPID is the pattern as a glob matching every process's core.
func (cp CorePattern) globAnyPID() string {
	return cp.globWith("*")
}
