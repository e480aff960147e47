package job

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Limits on the search for a job's cores on one node.
const (
	maxCoreSearchDepth = 3
	maxCoreCandidates  = 4096
)

// CoreSearch says where one node looks for a job's cores.
type CoreSearch struct {
	JobID string
	// Dir, when set, is searched (to maxCoreSearchDepth levels) instead of
	// kernel.core_pattern's directory.
	Dir string
	// WorkDir is the job's working directory: where a relative
	// core_pattern puts cores.
	WorkDir string
	// Since skips cores written before the job started.
	Since time.Time
	// Pattern is kernel.core_pattern ("" reads /proc/sys/kernel/core_pattern).
	Pattern string
}

// FindCores lists the cores of the job on this node: every core file in
// the search directory whose process environment names the job
// (SLURM_JOB_ID in the strings at the top of its stack), or, when the
// kernel pipes cores to systemd-coredump, those coredumpctl extracts into
// tmp. notes say where it looked and what it skipped.
func FindCores(cs CoreSearch, tmp string) (cores, notes []string) {
	pattern := cs.Pattern
	if pattern == "" {
		b, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
		pattern = strings.TrimSpace(string(b))
	}
	var candidates []string
	switch {
	case cs.Dir != "":
		candidates = walkFiles(cs.Dir, func(string) bool { return true })
		notes = append(notes, fmt.Sprintf("searched %s", cs.Dir))
	case strings.HasPrefix(pattern, "|") && strings.Contains(pattern, "systemd-coredump"):
		var note string
		candidates, note = fromCoredumpctl(cs.Since, tmp)
		notes = append(notes, note)
	case strings.HasPrefix(pattern, "|"):
		return nil, []string{fmt.Sprintf("the kernel pipes cores to a program (core_pattern %q): name where it keeps them with --cores DIR", pattern)}
	default:
		dir, match := patternDir(pattern, cs.WorkDir)
		candidates = walkFiles(dir, match)
		notes = append(notes, fmt.Sprintf("searched %s for core_pattern %q", dir, pattern))
	}
	for _, c := range candidates {
		if st, err := os.Stat(c); err != nil || (!cs.Since.IsZero() && st.ModTime().Before(cs.Since.Add(-time.Second))) {
			continue
		}
		env, err := CoreEnv(c)
		if err != nil {
			continue // not a core
		}
		if env["SLURM_JOB_ID"] != cs.JobID {
			continue
		}
		cores = append(cores, c)
	}
	return cores, notes
}

// patternDir turns core_pattern into the directory the cores are in and a
// file-name matcher: its %-specifiers match anything, and a pattern without
// %p may have ".PID" appended (kernel.core_uses_pid).
func patternDir(pattern, workDir string) (string, func(string) bool) {
	if pattern == "" {
		pattern = "core"
	}
	if !filepath.IsAbs(pattern) {
		pattern = filepath.Join(workDir, pattern)
	}
	dir, name := filepath.Split(pattern)
	var glob strings.Builder
	for i := 0; i < len(name); i++ {
		switch {
		case name[i] == '%' && i+1 < len(name):
			i++
			if name[i] == '%' {
				glob.WriteByte('%')
			} else {
				glob.WriteByte('*')
			}
		case strings.IndexByte("*?[\\", name[i]) >= 0:
			glob.WriteByte('\\')
			glob.WriteByte(name[i])
		default:
			glob.WriteByte(name[i])
		}
	}
	g := glob.String()
	return filepath.Clean(dir), func(base string) bool {
		ok, _ := filepath.Match(g, base)
		ok2, _ := filepath.Match(g+".*", base)
		return ok || ok2
	}
}

// walkFiles lists regular files under dir whose names match, to
// maxCoreSearchDepth levels and at most maxCoreCandidates files.
func walkFiles(dir string, match func(string) bool) []string {
	var out []string
	root := filepath.Clean(dir)
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != root && strings.Count(strings.TrimPrefix(p, root), string(filepath.Separator)) >= maxCoreSearchDepth {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && match(d.Name()) {
			out = append(out, p)
		}
		if len(out) >= maxCoreCandidates {
			return filepath.SkipAll
		}
		return nil
	})
	return out
}

// fromCoredumpctl extracts the cores systemd-coredump kept since the job
// started into tmp.
func fromCoredumpctl(since time.Time, tmp string) ([]string, string) {
	args := []string{"--no-pager", "--json=short", "list"}
	if !since.IsZero() {
		args = append(args, "--since=@"+strconv.FormatInt(since.Unix(), 10))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "coredumpctl", args...).Output()
	if err != nil {
		return nil, fmt.Sprintf("systemd-coredump keeps the cores, but `coredumpctl list` failed: %v", err)
	}
	var list []struct {
		PID      int    `json:"pid"`
		Corefile string `json:"corefile"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Sprintf("coredumpctl list: %v", err)
	}
	var cores []string
	for _, e := range list {
		if e.Corefile != "present" || len(cores) >= maxCoreCandidates {
			continue
		}
		dst := filepath.Join(tmp, fmt.Sprintf("core.%d", e.PID))
		if exec.CommandContext(ctx, "coredumpctl", "--no-pager", "-q", "dump", strconv.Itoa(e.PID), "-o", dst).Run() == nil {
			cores = append(cores, dst)
		}
	}
	return cores, fmt.Sprintf("extracted %d cores with coredumpctl", len(cores))
}
