// Package gitsrc finds the exact source that a crashed process was built
// from and relates it to upstream history.
//
// For each module of a crash model (analysis.Crash) it works out a
// component — a repository and the revision it was built at — from, strongest
// first: the user's configuration (faultline.json), the module's
// .note.package ELF note (FDO packaging metadata), Python dist-info and
// version files, the dpkg database, a .git directory near the DWARF
// compilation directory, and a built-in registry of well-known stacks. It
// fetches that revision with go-git into a cache (depth 1 by tag or branch,
// by commit hash where the server allows it, deeper otherwise), writes the
// files out atomically, maps the DWARF file names of frames onto the
// checkout by their longest matching path suffix, and reviews the upstream
// default branch for commits that changed the crashing function since.
//
// Network access happens only here (and in debuginfod lookups elsewhere);
// Options.Offline keeps gitsrc to what the cache already holds. Every path
// that comes from a dump, a note or a repository is untrusted: nothing is
// ever written outside the cache directory.
package gitsrc

import (
	"time"

	"github.com/faultline-dev/faultline/gitsrc/review"
)

// Result is what `faultline sources --json` prints.
type Result struct {
	Components []Component   `json:"components"`
	Frames     []FrameSource `json:"frames"`
	Upstream   []FileReview  `json:"upstream"`
	// Fix answers Options.Fix: whether a given commit is in the crashing revision.
	Fix      *FixCheck `json:"fix,omitempty"`
	Problems []Problem `json:"problems"`
}

// Component is a source component: the repository and exact revision that
// a module (matched by Module, a regular expression on its path) was built from.
type Component struct {
	Name   string `json:"name"`
	Module string `json:"module"`
	Repo   string `json:"repo"`
	// Revision is what the inventory named: a tag, branch or commit.
	Revision string `json:"revision"`
	// Commit is Revision resolved to a full commit hash.
	Commit string `json:"commit"`
	// Checkout is the local directory holding the files of Commit.
	Checkout string `json:"checkout"`
	// Version is the component's version, when the inventory knew it.
	Version string `json:"version,omitempty"`
	// Origin says where the inventory found the component: config,
	// package-note, dpkg, rpm, conda, python, git, registry (joined with
	// "+" when one source named it and another gave the repository).
	Origin string `json:"origin,omitempty"`
	// Branch is the upstream's default branch as the built-in registry
	// knows it (zlib: develop), for reviewing offline.
	Branch string `json:"branch,omitempty"`
	// Package is the distribution package that installed the modules.
	Package *Package `json:"package,omitempty"`
	// Facts say what the inventory found and where, in the order found.
	Facts []Fact `json:"facts,omitempty"`
	// DebugInfo, when frames of the component's modules have no line
	// information, says how many and the step that would map them.
	DebugInfo string `json:"debugInfo,omitempty"`
	// Verification says whether the checkout matched the binary (nil when
	// nothing was checked out).
	Verification *Verification `json:"verification,omitempty"`
	// Backports are the changes the package's changelog says it made on
	// top of the upstream release that name a CVE or an upstream commit.
	Backports []Backport `json:"backports,omitempty"`
	// Sparse is set when only the directories that frames point into were
	// written out (huge repositories).
	Sparse bool `json:"sparse,omitempty"`
	// Modules lists the paths of the crash's modules built from this component.
	Modules []string `json:"modules,omitempty"`
}

// Fact is one thing the inventory found about a component, and where:
// {"version", "1.2.13", "file name libz.so.1.2.13"}.
type Fact struct {
	Field  string `json:"field"`
	Value  string `json:"value"`
	Origin string `json:"origin"`
}

// FrameSource maps one frame's DWARF file name onto a checkout file.
type FrameSource struct {
	Thread int    `json:"thread"`
	Index  int    `json:"index"`
	File   string `json:"file"`
	Source string `json:"source"`
	// Line and Function are the frame's, for consumers that place lenses.
	Line     int    `json:"line,omitempty"`
	Function string `json:"function,omitempty"`
	// Component names the component whose checkout holds Source.
	Component string `json:"component,omitempty"`
	// Path is Source relative to the checkout (the path in the repository).
	Path string `json:"path,omitempty"`
}

// FileReview is one file's upstream review (package review); ReviewCommit
// one commit of it.
type (
	FileReview   = review.FileReview
	ReviewCommit = review.ReviewCommit
)

// FixCheck answers whether a fix commit is already in the crashing revision.
type FixCheck struct {
	Commit    string `json:"commit"`
	Component string `json:"component,omitempty"`
	Revision  string `json:"revision,omitempty"`
	// Included is true when Commit is an ancestor of (or equal to) the
	// crashing revision. Known is false when history ran out before an
	// answer (shallow cache, bounds).
	Included bool   `json:"included"`
	Known    bool   `json:"known"`
	Subject  string `json:"subject,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Backport is the changelog change that applied the fix, when the
	// answer comes from the package rather than from git history.
	Backport *Backport `json:"backport,omitempty"`
}

// Problem is something gitsrc could not do, with what to set to fix it.
type Problem struct {
	Message string `json:"message"`
	Module  string `json:"module,omitempty"`
}

// Progress reports how a long step goes; Total is 0 when unknown.
type Progress struct {
	Message string
	Done    int
	Total   int
}

// Options configure Resolve.
type Options struct {
	// Config holds the user's component rules and source map (faultline.json).
	Config *Config
	// CacheDir holds repositories and checkouts (default: DefaultCacheDir()).
	CacheDir string
	// Offline forbids network access: only what the cache holds is used.
	Offline bool
	// Sysroot is prefixed to module paths that do not exist on this machine
	// (for reading their notes, dpkg database and Python packages).
	Sysroot string
	// Review bounds the upstream review; Review.Disabled skips it.
	Review ReviewOptions
	// Fix, when set, is a commit to look for in the crashing revision, or
	// a CVE id to look for in the packages' changelogs.
	Fix string
	// SparseThreshold is the number of files above which only the
	// directories that frames point into are written (default 20000).
	SparseThreshold int
	// NoRegistry disables the built-in registry of well-known stacks.
	NoRegistry bool
	// Progress, when set, is told how fetching and reviewing go.
	Progress func(Progress)
	// CheckedOut, when set, is given the result as soon as the checkouts
	// are written and the frames mapped, before the upstream review (which
	// may fetch for a while): an editor shows the crash in the checkouts
	// at once, and the review's lenses later.
	CheckedOut func(*Result)
}

// ReviewOptions bound the upstream review.
type ReviewOptions struct {
	Disabled bool
	// MaxCommits bounds the upstream commits walked per file (default 50000)
	// and the depth fetched from the upstream branch.
	MaxCommits int
	// Window bounds the walk to commits at most this long before the
	// crashing revision's commit date (clock skew and merged branches);
	// default 30 days. Commits older than that are not examined.
	Window time.Duration
	// Frames is how many mapped frames of the crashing thread are reviewed:
	// the culprit and its nearest callers (default 3).
	Frames int
	// Branch is the upstream branch (default: the remote's HEAD).
	Branch string
}

func (o *Options) progress(msg string, done, total int) {
	if o.Progress != nil {
		o.Progress(Progress{Message: msg, Done: done, Total: total})
	}
}

func (r *ReviewOptions) maxCommits() int {
	if r.MaxCommits > 0 {
		return r.MaxCommits
	}
	return 50000
}

func (r *ReviewOptions) window() time.Duration {
	if r.Window > 0 {
		return r.Window
	}
	return 30 * 24 * time.Hour
}

func (r *ReviewOptions) frames() int {
	if r.Frames > 0 {
		return r.Frames
	}
	return 3
}
