package review

import (
	"time"
)

// FileReview lists the upstream commits after the crashing revision that
// changed one file of the crash chain.
type FileReview struct {
	File   string `json:"file"`
	Source string `json:"source"`
	// Path is the file's path in the repository at the crashing revision.
	Path      string `json:"path"`
	Component string `json:"component"`
	// Revision and Commit are the crashing revision the review starts from.
	Revision string `json:"revision"`
	Commit   string `json:"baseCommit"`
	// Branch is the upstream branch reviewed and Head its commit.
	Branch string `json:"branch"`
	Head   string `json:"head"`
	// Function is the crashing frame's function in this file, and
	// FunctionStart/FunctionEnd its lines at the crashing revision.
	Function      string `json:"function,omitempty"`
	FunctionStart int    `json:"functionStart,omitempty"`
	FunctionEnd   int    `json:"functionEnd,omitempty"`
	// Extent says where FunctionStart/FunctionEnd come from: "binary"
	// (DW_AT_decl_line to the last line the function's code covers),
	// "source" (the definition parsed), or "" when the function's extent is
	// unknown: then no commit is said to touch it, or not to.
	Extent string `json:"extent"`
	// HeadPath and HeadLines are the file and the function's lines at Head
	// (1-based, inclusive): TouchesFrame is what
	// `git log -L START,END:HEADPATH BASE..HEAD` lists for them.
	HeadPath  string   `json:"headPath,omitempty"`
	HeadLines [][2]int `json:"headLines,omitempty"`
	// FunctionGone is set when the function's lines are no longer at
	// Head (removed, or moved out of the file): then TouchesFrame marks
	// the commits that changed them on the way there.
	FunctionGone bool `json:"functionGone,omitempty"`
	// Line is the frame's line in this file.
	Line int `json:"line,omitempty"`
	// Commits are what `git log BASE..HEAD -- FILE` lists (git's default
	// history simplification), ranked: commits that touch the frame's
	// function first, then by how much the message reads like a fix,
	// newest first.
	Commits []ReviewCommit `json:"commits"`
	// Walked is how many upstream commits were examined; Bounded is set when
	// the walk stopped at the review's bounds before reaching the
	// crashing revision. Inexact is set when a diff was bounded or a parent
	// commit was missing from the cache, so git might list otherwise.
	Walked  int  `json:"walked"`
	Bounded bool `json:"bounded,omitempty"`
	Inexact bool `json:"inexact,omitempty"`
	// Unverified is set when the component's checkout did not match the
	// binary (gitsrc's Component.Verification): the review starts from a revision
	// that may not be what crashed.
	Unverified bool `json:"unverified,omitempty"`
}

// ReviewCommit is one upstream commit that changed a reviewed file.
type ReviewCommit struct {
	Commit       string    `json:"commit"`
	Subject      string    `json:"subject"`
	Date         time.Time `json:"date"`
	Author       string    `json:"author,omitempty"`
	TouchesFrame bool      `json:"touchesFrame"`
	// Score ranks likely fixes: keywords such as race, use-after-free,
	// crash, segfault, null, fix or revert in the message, and touching
	// the frame's function.
	Score int `json:"score"`
	// Keywords are the fix keywords found in the message.
	Keywords []string `json:"keywords,omitempty"`
	// Path is the file's path in this commit when it was renamed since.
	Path string `json:"path,omitempty"`
	// Message is the full commit message; Hunk the unified diff hunks of
	// this commit that overlap the function (capped), for hovers.
	Message string `json:"message,omitempty"`
	Hunk    string `json:"hunk,omitempty"`
	// Backported is the package version whose changelog says it applied
	// this commit (by hash, CVE id or subject): the fix is in the crashed
	// build although the upstream release lacks it.
	Backported string `json:"backported,omitempty"`
}
