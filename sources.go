package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/gitsrc"
)

var sourcesCommand = &command{
	name:  "sources",
	args:  "[--json] [--config FILE] [OPEN FLAGS] DUMP",
	short: "exact source versions, checkouts and upstream commits",
	long: `Sources finds the exact source of every component in the crash without configuration
(.note.package, the package database: dpkg, rpm, conda; Python metadata; a git checkout of the
sources; the library file's name, version strings and symbol versions; a registry of common
upstreams and their tag conventions), each fact with where it came from; the rules in
` + "`" + gitsrc.ConfigFileName + "`" + ` override them. It checks the source out with go-git, verifies the
checkout against the binary, maps the frames onto it, and reviews the upstream commits since:
is the fix already in? A package's changelog answers for fixes it backported.

--offline keeps both debuginfod and the git fetches to what the caches hold.

` + openFlagsUsage,
	examples: []string{
		"faultline sources core.1234",
		"faultline sources --fix 1a2b3c4 --json core.1234",
		"faultline sources --offline --fix CVE-2022-37434 core.1234",
		"faultline sources --offline --no-review core.1234",
	},
	interspersed: true,
	new:          func() runner { return &sourcesRun{} },
}

// sourcesRun is one `faultline sources`.
type sourcesRun struct {
	json       bool
	configPath string
	cacheDir   string
	fix        string
	noReview   bool
	maxCommits int
	window     time.Duration
	branch     string
	quiet      bool
	open       openFlags
}

func (s *sourcesRun) flags(fs *flag.FlagSet) {
	fs.BoolVar(&s.json, "json", false, "print components, frames and upstream commits as JSON")
	fs.StringVar(&s.configPath, "config", "", "component rules (default: ./"+gitsrc.ConfigFileName+" when present)")
	fs.StringVar(&s.cacheDir, "cache-dir", "", "checkout cache (default: "+gitsrc.DefaultCacheDir()+")")
	fs.StringVar(&s.fix, "fix", "", "commit to look for in the crashing revision, or a CVE id to look for in the packages' changelogs (is the fix already in?)")
	fs.BoolVar(&s.noReview, "no-review", false, "skip the upstream review")
	fs.IntVar(&s.maxCommits, "max-commits", 0, "upstream commits to fetch and walk per component (default 50000)")
	fs.DurationVar(&s.window, "window", 0, "walk upstream commits back to this long before the crashing revision (default 720h)")
	fs.StringVar(&s.branch, "branch", "", "upstream branch to review (default: the remote's HEAD)")
	fs.BoolVar(&s.quiet, "quiet", false, "no progress line")
	s.open.register(fs)
}

// run finds the exact source of every component in the crash, checked out
// with go-git, frames mapped onto it, and upstream commits since.
func (s *sourcesRun) run(pos []string, stdout, stderr io.Writer) error {
	of := &s.open
	var err error
	if len(pos) != 1 {
		return usageError{errors.New("expected exactly one DUMP")}
	}
	var cfg *gitsrc.Config
	if s.configPath != "" {
		cfg, err = gitsrc.LoadConfig(s.configPath)
	} else {
		cfg, err = gitsrc.FindConfig(".")
	}
	if err != nil {
		return err
	}
	c, err := analysis.Open(pos[0], of.options())
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	pl := &progressLine{w: stderr, tty: isTerminal(stderr) && !s.quiet}
	opt := gitsrc.Options{
		Config: cfg, CacheDir: s.cacheDir, Offline: of.offline, Sysroot: of.sysroot, Fix: s.fix,
		Review:   gitsrc.ReviewOptions{Disabled: s.noReview, MaxCommits: s.maxCommits, Window: s.window, Branch: s.branch},
		Progress: pl.report,
	}
	// The review decodes thousands of commits and trees, garbage as soon
	// as read: collecting it sooner keeps the peak near what is live
	// (issue 22: ≤ 150 MB on a curl-size history).
	defer debug.SetGCPercent(debug.SetGCPercent(30))
	res, err := gitsrc.Resolve(ctx, c, opt)
	pl.done()
	if err != nil {
		return err
	}
	if s.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	printSources(stdout, res)
	return nil
}

// progressLine keeps one status line on a terminal, rewritten in place.
type progressLine struct {
	w    io.Writer
	tty  bool
	last time.Time
	n    int
}

func (p *progressLine) report(pr gitsrc.Progress) {
	if !p.tty || time.Since(p.last) < 100*time.Millisecond && pr.Total != 0 && pr.Done != pr.Total {
		return
	}
	p.last = time.Now()
	msg := pr.Message
	if pr.Total > 0 {
		msg = fmt.Sprintf("%s (%d/%d)", msg, pr.Done, pr.Total)
	}
	if len(msg) > 100 {
		msg = msg[:100]
	}
	fmt.Fprintf(p.w, "\r\033[K%s", msg)
	p.n++
}

func (p *progressLine) done() {
	if p.tty && p.n > 0 {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func printSources(w io.Writer, r *gitsrc.Result) {
	fmt.Fprintln(w, "Components")
	if len(r.Components) == 0 {
		fmt.Fprintln(w, "  (none found: add rules to faultline.json)")
	}
	for _, c := range r.Components {
		printComponent(w, c)
	}
	fmt.Fprintln(w, "\nFrames")
	for _, f := range r.Frames {
		fmt.Fprintf(w, "  thread %d #%-3d %s:%d\n      → %s\n", f.Thread, f.Index, f.File, f.Line, f.Source)
	}
	for _, u := range r.Upstream {
		printReview(w, &u)
	}
	if r.Fix != nil {
		fix := r.Fix.Commit
		if !strings.HasPrefix(fix, "CVE-") {
			fix = shortCommit(fix)
		}
		fmt.Fprintf(w, "\nFix %s: ", fix)
		switch {
		case !r.Fix.Known:
			fmt.Fprintf(w, "unknown — %s\n", r.Fix.Reason)
		case r.Fix.Included:
			fmt.Fprintf(w, "already included — %s\n", r.Fix.Reason)
		default:
			fmt.Fprintf(w, "NOT included — %s\n", r.Fix.Reason)
		}
	}
	if len(r.Problems) > 0 {
		fmt.Fprintln(w, "\nProblems")
		for _, p := range r.Problems {
			if p.Module != "" {
				fmt.Fprintf(w, "  %s: %s\n", p.Module, p.Message)
			} else {
				fmt.Fprintf(w, "  %s\n", p.Message)
			}
		}
	}
}

// printComponent prints one component: what it is, where each fact came
// from, its checkout, and how to map its frames without line information.
func printComponent(w io.Writer, c gitsrc.Component) {
	commit := shortCommit(c.Commit)
	if commit == "" {
		commit = "not fetched"
	}
	fmt.Fprintf(w, "  %-20s %s @ %s (%s)  [%s]\n", c.Name, c.Repo, c.Revision, commit, c.Origin)
	for _, f := range c.Facts {
		fmt.Fprintf(w, "      %s %s  ← %s\n", f.Field, f.Value, f.Origin)
	}
	if c.Branch != "" {
		fmt.Fprintf(w, "      default branch %s\n", c.Branch)
	}
	if v := c.Verification; v != nil {
		if v.Verified {
			fmt.Fprintf(w, "      checkout verified against the binary: %d frame files, %d function declarations%s\n", v.Files, v.Functions, md5Note(v.MD5))
		} else {
			fmt.Fprintf(w, "      checkout UNVERIFIED: %s\n", strings.Join(v.Mismatches, "; "))
		}
	}
	if len(c.Backports) > 0 {
		var ids []string
		for _, b := range c.Backports {
			for _, id := range append(append([]string{}, b.CVEs...), b.Commits...) {
				if !slices.Contains(ids, id) {
					ids = append(ids, id)
				}
			}
		}
		fmt.Fprintf(w, "      %s applied on top of %s (changelog): %s\n", c.Package.Name, c.Package.Upstream, strings.Join(ids, ", "))
	}
	if c.DebugInfo != "" {
		fmt.Fprintf(w, "      %s\n", c.DebugInfo)
	}
	if c.Checkout != "" {
		fmt.Fprintf(w, "      %s\n", c.Checkout)
	}
}

func md5Note(n int) string {
	if n == 0 {
		return " (lines in range; no DWARF 5 MD5s to compare)"
	}
	return fmt.Sprintf(" (%d by DWARF 5 MD5)", n)
}

// printReview prints one file's upstream review: what it found in one
// sentence, the git command that lists the same commits, and the commits
// (* marks those that changed the function).
func printReview(w io.Writer, u *gitsrc.FileReview) {
	lines := ""
	if u.Extent != "" {
		lines = fmt.Sprintf(", lines %d-%d from the %s", u.FunctionStart, u.FunctionEnd, u.Extent)
	}
	fmt.Fprintf(w, "\nUpstream %s: %s (%s%s), %d commits walked on %s\n", u.Component, u.Path, u.FunctionLabel(), lines,
		u.Walked, u.Branch)
	if u.Unverified {
		fmt.Fprintf(w, "  (unverified: the checkout of %s does not match the binary; see Problems)\n", u.Revision)
	}
	fmt.Fprintf(w, "  %s\n", u.Summary(3))
	if cmd := u.GitLogL(); cmd != "" {
		fmt.Fprintf(w, "  (the commits marked * are those of: %s)\n", cmd)
	}
	for _, c := range u.Commits {
		mark := " "
		if c.TouchesFrame {
			mark = "*"
		}
		fmt.Fprintf(w, "  %s %s %s %s", mark, shortCommit(c.Commit), c.Date.Format("2006-01-02"), c.Subject)
		if len(c.Keywords) > 0 {
			fmt.Fprintf(w, "  [%s]", strings.Join(c.Keywords, ", "))
		}
		if c.Backported != "" {
			fmt.Fprintf(w, "  [included: backported in %s]", c.Backported)
		}
		fmt.Fprintln(w)
	}
}

func shortCommit(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
