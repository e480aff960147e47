package gitsrcbench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/gitsrc"
	"github.com/faultline-dev/faultline/internal/crashbuild"
)

// BenchmarkUpstreamCurlSize measures `faultline sources` reviewing a crash
// in a curl-size history (generated, served by git daemon on 127.0.0.1,
// reached through a url.insteadOf mirror rule as a site without access to
// github.com would), cold, warm with nothing new upstream, and offline,
// against git clone of the same repository in the same run: the whole
// history, the tag alone at depth 1, and the branch after the tag
// (--shallow-exclude, what the review needs). Issue 22's targets: cold
// ≤ 30 s and ≤ 150 MB, warm ≤ 3 s, offline ≤ 2 s.
//
//	go test ./bench/gitsrc -run '^$' -bench UpstreamCurlSize -benchtime 1x
//
// The history is generated once (git fast-import, a few minutes on two
// cores) into $XDG_CACHE_HOME/faultline/bench/ (FAULTLINE_BENCH_DIR).
func BenchmarkUpstreamCurlSize(b *testing.B) {
	for range b.N {
		m := measureReview(b, curlSize)
		m.print(b)
		m.checkTargets(b)
	}
}

// TestUpstreamReviewCost runs the benchmark's harness on a small history
// of the same shape: the review lists what git log and git log -L list, a
// warm run fetches nothing, and faultline's peak memory stays bounded.
func TestUpstreamReviewCost(t *testing.T) {
	m := measureReview(t, curlShape{Commits: 3000, After: 1500, Files: 400, EasyEvery: 30, PerformEvery: 4})
	m.print(t)
	if m.warmFetched {
		t.Errorf("the warm run fetched although nothing moved upstream")
	}
	for _, r := range []run{m.cold, m.warm, m.offline} {
		if r.rssMiB > 150 {
			t.Errorf("%s: %.0f MiB peak RSS (bound 150)", r.name, r.rssMiB)
		}
	}
}

// run is one measured command.
type run struct {
	name   string
	wall   time.Duration
	cpu    time.Duration
	rssMiB float64
	out    []byte
}

// measurement is one benchmark pass.
type measurement struct {
	shape                           curlShape
	cold, warm, offline             run
	cloneFull, cloneTag, cloneAfter run
	walked, fileCommits, touching   int
	warmFetched                     bool
}

func measureReview(tb testing.TB, s curlShape) *measurement {
	tb.Helper()
	repo := curlRepo(tb, s)
	url := serve(tb, repo)
	exe := buildFaultline(tb)
	work := tb.TempDir()
	easy := gitRun(tb, "", "-C", repo, "show", "curl-7_88_1:lib/easy.c")
	prog := crashbuild.Crash(tb, filepath.Join(work, "build"), "lib/easy.c", easy+"\n\nint main(void)\n{\n  return easy_perform(0);\n}\n",
		"gcc", "-g", "-O0", "-fdebug-prefix-map="+filepath.Join(work, "build")+"=/build/curl-7.88.1")
	cfg := filepath.Join(work, "faultline.json")
	rule := `{"components": [{"module": "/bin/easy$", "name": "curl", "repo": "https://github.com/curl/curl.git", "revision": "curl-7_88_1"}]}`
	gitconfig := filepath.Join(work, "gitconfig")
	os.WriteFile(cfg, []byte(rule), 0o644)
	os.WriteFile(gitconfig, []byte("[url \""+url+"\"]\n\tinsteadOf = https://github.com/curl/\n"), 0o644)
	env := append(os.Environ(), "GIT_CONFIG_GLOBAL="+gitconfig, "GIT_CONFIG_NOSYSTEM=1", "DEBUGINFOD_URLS=")
	cache := filepath.Join(work, "cache")
	args := []string{"sources", "--json", "--quiet", "--config", cfg, "--cache-dir", cache, "--exe", prog.Exe, prog.Core}
	m := &measurement{shape: s}
	m.cold = measure(tb, "faultline cold", env, exe, args...)
	packs := countPacks(cache)
	m.warm = measure(tb, "faultline warm", env, exe, args...)
	m.warmFetched = countPacks(cache) != packs
	m.offline = measure(tb, "faultline offline", env, exe, append([]string{"sources", "--offline"}, args[1:]...)...)
	clones := tb.TempDir()
	m.cloneFull = measure(tb, "git clone (all history)", env, "git", "clone", "-q", "--bare", url+"curl.git", filepath.Join(clones, "full"))
	m.cloneTag = measure(tb, "git clone --depth 1 (tag)", env, "git", "clone", "-q", "--bare", "--depth", "1", "--branch", "curl-7_88_1",
		url+"curl.git", filepath.Join(clones, "tag"))
	m.cloneAfter = measure(tb, "git clone --shallow-exclude (after tag)", env, "git", "clone", "-q", "--bare", "--single-branch",
		"--branch", "master", "--shallow-exclude=curl-7_88_1", url+"curl.git", filepath.Join(clones, "after"))
	for _, r := range []run{m.cold, m.warm, m.offline} {
		m.checkReview(tb, r, repo)
	}
	return m
}

// checkReview holds one run's review of lib/easy.c to git log and git
// log -L on the generated repository.
func (m *measurement) checkReview(tb testing.TB, r run, repo string) {
	var res gitsrc.Result
	if err := json.Unmarshal(r.out, &res); err != nil {
		tb.Fatalf("%s: %v\n%.2000s", r.name, err, r.out)
	}
	var fr *gitsrc.FileReview
	for i := range res.Upstream {
		if res.Upstream[i].Path == "lib/easy.c" {
			fr = &res.Upstream[i]
		}
	}
	if fr == nil || fr.Extent != "binary" || fr.Function != "easy_perform" {
		tb.Fatalf("%s: no review of easy_perform from its DWARF extent: %+v (problems %+v)", r.name, res.Upstream, res.Problems)
	}
	file := strings.Fields(gitRun(tb, "", "-C", repo, "log", "--format=%H", "curl-7_88_1..master", "--", "lib/easy.c"))
	args := []string{"-C", repo, "log", "--format=%H", "-s"}
	for _, l := range fr.HeadLines {
		args = append(args, fmt.Sprintf("-L%d,%d:%s", l[0], l[1], fr.HeadPath))
	}
	touching := strings.Fields(gitRun(tb, "", append(args, "curl-7_88_1..master")...))
	if len(fr.Commits) != len(file) || fr.Touching() != len(touching) || len(touching) == 0 {
		tb.Errorf("%s: %d commits, %d changing easy_perform; git log lists %d, git log -L %d", r.name, len(fr.Commits),
			fr.Touching(), len(file), len(touching))
	}
	m.walked, m.fileCommits, m.touching = fr.Walked, len(fr.Commits), fr.Touching()
}

func (m *measurement) print(tb testing.TB) {
	var b strings.Builder
	fmt.Fprintf(&b, "history: %d commits, %d after curl-7_88_1, %d files; review walked %d, lib/easy.c: %d commits, easy_perform: %d (= git log, git log -L)\n",
		m.shape.Commits, m.shape.After, m.shape.Files, m.walked, m.fileCommits, m.touching)
	fmt.Fprintf(&b, "load average %s (%d CPUs)\n", loadAverage(), runtime.NumCPU())
	fmt.Fprintf(&b, "%-42s %9s %9s %9s\n", "command", "wall s", "CPU s", "RSS MiB")
	for _, r := range []run{m.cold, m.warm, m.offline, m.cloneFull, m.cloneTag, m.cloneAfter} {
		fmt.Fprintf(&b, "%-42s %9.2f %9.2f %9.1f\n", r.name, r.wall.Seconds(), r.cpu.Seconds(), r.rssMiB)
	}
	fmt.Fprintf(&b, "cold review / full clone: wall x%.2f, RSS x%.2f; / shallow-exclude clone: wall x%.2f; warm fetched: %v\n",
		m.cold.wall.Seconds()/m.cloneFull.wall.Seconds(), m.cold.rssMiB/m.cloneFull.rssMiB,
		m.cold.wall.Seconds()/m.cloneAfter.wall.Seconds(), m.warmFetched)
	tb.Log("\n" + b.String())
}

// loadAverage is /proc/loadavg's 1, 5 and 15 minute figures: wall times
// on a loaded machine say more with them.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// loaded reports whether the 1-minute load average exceeds the CPUs.
func loaded() bool {
	var l float64
	_, err := fmt.Sscan(loadAverage(), &l)
	return err == nil && l > float64(runtime.NumCPU())
}

// checkTargets holds the curl-size figures to issue 22's targets.
func (m *measurement) checkTargets(tb testing.TB) {
	for _, c := range []struct {
		r    run
		wall time.Duration
		rss  float64
	}{{m.cold, 30 * time.Second, 150}, {m.warm, 3 * time.Second, 150}, {m.offline, 2 * time.Second, 150}} {
		// On a machine whose load exceeds its CPUs the wall time measures
		// the other processes: then the command's own CPU time is held to
		// the target, and the output says so.
		took, what := c.r.wall, "wall"
		if loaded() {
			took, what = c.r.cpu, "CPU (machine loaded beyond its CPUs: wall not judged)"
		}
		if took > c.wall || c.r.rssMiB > c.rss {
			tb.Errorf("%s: %.2f s %s, %.0f MiB; target ≤ %v and ≤ %.0f MiB", c.r.name, took.Seconds(), what, c.r.rssMiB, c.wall, c.rss)
		} else {
			tb.Logf("%s: %.2f s %s, %.0f MiB: target ≤ %v and ≤ %.0f MiB met", c.r.name, took.Seconds(), what, c.r.rssMiB, c.wall, c.rss)
		}
	}
	if m.warmFetched {
		tb.Errorf("the warm run fetched although nothing moved upstream")
	}
}

// measure runs a command and records its wall time, CPU time and peak RSS
// (its own and its reaped children's). The command runs under GNU time:
// ru_maxrss of a Go process's direct child is wrong, since Go starts
// children with vfork and exec leaves the parent's peak in the child's
// figure (every command read the test process's ~80 MiB).
func measure(tb testing.TB, name string, env []string, exe string, args ...string) run {
	tb.Helper()
	const gnuTime = "/usr/bin/time"
	if _, err := os.Stat(gnuTime); err != nil {
		tb.Fatalf("%s is missing: apt-get install time (.ci/test installs it)", gnuTime)
	}
	usage := filepath.Join(tb.TempDir(), "usage")
	cmd := exec.Command(gnuTime, append([]string{"-f", "%M %U %S", "-o", usage, exe}, args...)...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Run(); err != nil {
		tb.Fatalf("%s: %v\n%s", name, err, errb.String())
	}
	r := run{name: name, wall: time.Since(start), out: out.Bytes()}
	b, err := os.ReadFile(usage)
	f := strings.Fields(string(b))
	if err != nil || len(f) != 3 {
		tb.Fatalf("%s: GNU time wrote no usage (%v): %q", name, err, b)
	}
	kib, _ := strconv.ParseFloat(f[0], 64)
	user, _ := strconv.ParseFloat(f[1], 64)
	sys, _ := strconv.ParseFloat(f[2], 64)
	r.cpu = time.Duration((user + sys) * float64(time.Second))
	r.rssMiB = kib / 1024
	return r
}

func countPacks(cache string) int {
	p, _ := filepath.Glob(filepath.Join(cache, "repos", "*", "objects", "pack", "*.pack"))
	return len(p)
}

// serve starts git daemon on 127.0.0.1 serving repo as curl.git; it
// returns the daemon's base URL.
func serve(tb testing.TB, repo string) string {
	tb.Helper()
	root := tb.TempDir()
	if err := os.Symlink(repo, filepath.Join(root, "curl.git")); err != nil {
		tb.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	d := exec.Command("git", "daemon", "--reuseaddr", "--export-all", "--base-path="+root, "--listen=127.0.0.1",
		fmt.Sprintf("--port=%d", port), root)
	d.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		syscall.Kill(-d.Process.Pid, syscall.SIGTERM)
		d.Wait()
	})
	url := fmt.Sprintf("git://127.0.0.1:%d/", port)
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return url
		}
		time.Sleep(50 * time.Millisecond)
	}
	tb.Fatal("git daemon did not start")
	return ""
}

// buildFaultline builds the faultline command of this checkout.
func buildFaultline(tb testing.TB) string {
	tb.Helper()
	_, here, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(here), "..", "..")
	exe := filepath.Join(tb.TempDir(), "faultline")
	cmd := exec.Command("go", "build", "-o", exe, ".")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build: %v\n%s", err, out)
	}
	return exe
}
