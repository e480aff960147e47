package review

import (
	"fmt"
	"path"
	"strings"
)

// What a review says, in one sentence as an engineer would say it, for the
// report, the lens and the hover alike. It never claims more than the data
// hold: when the function's extent is unknown it says which commits
// changed the file and that it cannot tell which changed the function.

// Touching counts the commits that changed the function.
func (fr *FileReview) Touching() int {
	n := 0
	for _, c := range fr.Commits {
		if c.TouchesFrame {
			n++
		}
	}
	return n
}

// FunctionLabel is the function as a sentence names it: "inflate()".
func (fr *FileReview) FunctionLabel() string {
	fn := fr.Function
	if fn == "" {
		return "the function"
	}
	if !strings.HasSuffix(fn, ")") {
		fn += "()"
	}
	return fn
}

// RevisionLabel names the crashing revision: its tag or branch, else a
// short hash.
func (fr *FileReview) RevisionLabel() string {
	rev := fr.Revision
	if rev == "" || rev == fr.Commit {
		rev = fr.Commit
		if len(rev) > 12 {
			rev = rev[:12]
		}
	}
	return rev
}

// Summary says what the review found, listing up to max commits (the
// most likely fixes first): "2 upstream commits since v1.2.12 changed
// inflate(): eff308af Fix a bug … [overflow, fix]; 1eb7682f …".
func (fr *FileReview) Summary(max int) string {
	file := path.Base(fr.Path)
	rev := fr.RevisionLabel()
	n, m := fr.Touching(), len(fr.Commits)
	var s string
	switch {
	case fr.Extent == "" && m == 0:
		s = fmt.Sprintf("no upstream commit since %s changed %s", rev, file)
	case fr.Extent == "":
		s = fmt.Sprintf("%d upstream %s since %s changed %s; the extent of %s is unknown, so which changed it is not known: %s",
			m, plural(m, "commit", "commits"), rev, file, fr.FunctionLabel(), commitList(fr.Commits, false, max))
	case fr.FunctionGone:
		s = fmt.Sprintf("%s is no longer in %s upstream; %d %s since %s changed or removed it: %s",
			fr.FunctionLabel(), file, n, plural(n, "commit", "commits"), rev, commitList(fr.Commits, true, max))
	case n > 0:
		s = fmt.Sprintf("%d upstream %s since %s changed %s: %s", n, plural(n, "commit", "commits"), rev,
			fr.FunctionLabel(), commitList(fr.Commits, true, max))
	case m > 0:
		s = fmt.Sprintf("no upstream commit since %s changed %s (%d changed %s)", rev, fr.FunctionLabel(), m, file)
	default:
		s = fmt.Sprintf("no upstream commit since %s changed %s", rev, file)
	}
	return s + fr.caveat()
}

// caveat says when the answer may be short of git's.
func (fr *FileReview) caveat() string {
	switch {
	case fr.Bounded:
		return fmt.Sprintf(" (the walk stopped at its bounds after %d commits)", fr.Walked)
	case fr.Inexact:
		return " (some diffs were too large to follow line by line)"
	}
	return ""
}

// commitList lists commits (those that changed the function, or all),
// in rank order, up to max, each as "SHORT SUBJECT [keywords]".
func commitList(commits []ReviewCommit, touching bool, max int) string {
	var parts []string
	more := 0
	for _, c := range commits {
		if touching && !c.TouchesFrame {
			continue
		}
		if len(parts) == max {
			more++
			continue
		}
		p := c.Commit
		if len(p) > 8 {
			p = p[:8]
		}
		p += " " + c.Subject
		if kw := fixKeywordsOf(c); kw != "" {
			p += " [" + kw + "]"
		}
		parts = append(parts, p)
	}
	s := strings.Join(parts, "; ")
	if more > 0 {
		s += fmt.Sprintf("; and %d more", more)
	}
	return s
}

// fixKeywordsOf names what a commit's message says it fixes, the
// strongest first ("overflow, fix"), without the bare "fix" when there is
// more.
func fixKeywordsOf(c ReviewCommit) string {
	var kw []string
	for _, k := range c.Keywords {
		if k != "fix" || len(c.Keywords) == 1 {
			kw = append(kw, k)
		}
	}
	return strings.Join(kw, ", ")
}

// GitLogL is the git command whose list TouchesFrame equals:
// `git log -L START,END:PATH REV..BRANCH`.
func (fr *FileReview) GitLogL() string {
	if len(fr.HeadLines) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("git log")
	for _, r := range fr.HeadLines {
		fmt.Fprintf(&b, " -L %d,%d:%s", r[0], r[1], fr.HeadPath)
	}
	rev := fr.Revision
	if rev == "" {
		rev = fr.Commit
	}
	fmt.Fprintf(&b, " %s..%s", rev, fr.Branch)
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
