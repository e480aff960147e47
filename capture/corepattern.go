package capture

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CorePattern is where the kernel puts core dumps: kernel.core_pattern and
// kernel.core_uses_pid (Documentation/admin-guide/sysctl/kernel.rst).
type CorePattern struct {
	Pattern string // kernel.core_pattern
	UsesPID bool   // kernel.core_uses_pid
}

// ReadCorePattern reads the running kernel's core_pattern settings.
func ReadCorePattern() CorePattern {
	b, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
	u, _ := os.ReadFile("/proc/sys/kernel/core_uses_pid")
	p := strings.TrimSpace(string(b))
	if p == "" {
		p = "core"
	}
	return CorePattern{Pattern: p, UsesPID: strings.TrimSpace(string(u)) == "1"}
}

// collect finds the core of process pid, dumped after start, and moves it
// into the bundle. It returns the core's path in the bundle ("" when there
// is none) and a sentence saying where the core went or why there is none.
func (cp CorePattern) collect(pid int, cwd string, start time.Time, bundle string) (string, string) {
	dst := filepath.Join(bundle, "core")
	if strings.HasPrefix(cp.Pattern, "|") {
		helper := strings.Fields(cp.Pattern[1:])
		prog := ""
		if len(helper) > 0 {
			prog = helper[0]
		}
		switch {
		case strings.Contains(prog, "systemd-coredump"):
			return fromCoredumpctl(pid, dst)
		case strings.Contains(prog, "apport"):
			return fromApport(start, bundle)
		}
		return "", fmt.Sprintf("the kernel pipes cores to %s (core_pattern %q): faultline cannot collect it; look where that program keeps them", prog, cp.Pattern)
	}
	glob := cp.glob(pid)
	if !filepath.IsAbs(glob) {
		glob = filepath.Join(cwd, glob)
	}
	// The kernel writes the core before the parent's wait returns, but a
	// slow filesystem may show it a moment later.
	var found string
	for try := 0; try < 20 && found == ""; try++ {
		found = newestSince(glob, start)
		if found == "" {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if found == "" {
		return "", fmt.Sprintf("no core matching %s (core_pattern %q); check `ulimit -c` and the directory's permissions", glob, cp.Pattern)
	}
	if err := moveFile(found, dst); err != nil {
		return found, fmt.Sprintf("%s (left in place: %v)", found, err)
	}
	return dst, fmt.Sprintf("%s, moved into the bundle (core_pattern %q)", found, cp.Pattern)
}

// glob turns the pattern into a file glob for pid: %p is known, the other
// specifiers (core(5): %e, %t, %h, %s, ...) match anything.
func (cp CorePattern) glob(pid int) string {
	return cp.globWith(strconv.Itoa(pid))
}

// globWith turns the pattern into a file glob where the pid is pidGlob.
func (cp CorePattern) globWith(pidGlob string) string {
	var b strings.Builder
	hasPID := false
	p := cp.Pattern
	for i := 0; i < len(p); i++ {
		if p[i] != '%' || i+1 == len(p) {
			if strings.IndexByte("*?[\\", p[i]) >= 0 {
				b.WriteByte('\\')
			}
			b.WriteByte(p[i])
			continue
		}
		i++
		switch p[i] {
		case '%':
			b.WriteByte('%')
		case 'p', 'P':
			b.WriteString(pidGlob)
			hasPID = true
		default:
			b.WriteByte('*')
		}
	}
	if !hasPID && cp.UsesPID {
		b.WriteString("." + pidGlob)
	}
	return b.String()
}

// newestSince returns the newest file matching glob modified at or after t.
func newestSince(glob string, t time.Time) string {
	matches, _ := filepath.Glob(glob)
	best, bestTime := "", time.Time{}
	for _, m := range matches {
		st, err := os.Stat(m)
		if err != nil || !st.Mode().IsRegular() || st.ModTime().Before(t.Add(-time.Second)) {
			continue
		}
		if best == "" || st.ModTime().After(bestTime) {
			best, bestTime = m, st.ModTime()
		}
	}
	return best
}

func moveFile(src, dst string) error {
	if err := os.Rename(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Remove(src)
}

// fromCoredumpctl extracts the core that systemd-coredump stored for pid.
// systemd-coredump processes the core after the process is gone, so this
// retries for a while.
func fromCoredumpctl(pid int, dst string) (string, string) {
	if _, err := exec.LookPath("coredumpctl"); err != nil {
		return "", "systemd-coredump kept the core, but coredumpctl is not installed here; run `coredumpctl dump " + strconv.Itoa(pid) + "` on this machine"
	}
	var lastErr error
	for try := 0; try < 20; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		err := exec.CommandContext(ctx, "coredumpctl", "--no-pager", "-q", "dump", strconv.Itoa(pid), "-o", dst).Run()
		cancel()
		if err == nil {
			return dst, fmt.Sprintf("systemd-coredump kept it (coredumpctl dump %d), copied into the bundle", pid)
		}
		lastErr = err
		time.Sleep(250 * time.Millisecond)
	}
	return "", fmt.Sprintf("systemd-coredump handles cores here, but `coredumpctl dump %d` failed (%v): see `coredumpctl list`", pid, lastErr)
}

// fromApport reports the .crash report apport wrote (a core inside an
// apport report, unpacked with apport-unpack).
func fromApport(start time.Time, bundle string) (string, string) {
	crash := newestSince("/var/crash/*.crash", start)
	if crash == "" {
		return "", "apport handles cores here and wrote no /var/crash report for this run (apport ignores programs not from packages unless configured)"
	}
	if _, err := exec.LookPath("apport-unpack"); err == nil {
		dir := filepath.Join(bundle, "apport")
		if exec.Command("apport-unpack", crash, dir).Run() == nil {
			if core := filepath.Join(dir, "CoreDump"); fileExists(core) {
				return core, fmt.Sprintf("apport kept it in %s; unpacked into the bundle", crash)
			}
		}
	}
	return "", fmt.Sprintf("apport kept it in %s: unpack with `apport-unpack %s DIR` (the core is DIR/CoreDump)", crash, crash)
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
