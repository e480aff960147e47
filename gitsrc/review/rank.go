package review

import (
	"sort"
	"strings"

	"github.com/faultline-dev/faultline/internal/lazyregexp"
)

// rankCommits scores each commit as a likely fix and sorts them: those
// touching the function first, then by score, then newest first.
func rankCommits(commits []ReviewCommit) {
	for i := range commits {
		rc := &commits[i]
		rc.Score, rc.Keywords = fixScore(rc.Message)
		if rc.TouchesFrame {
			rc.Score += 10
		}
	}
	sort.SliceStable(commits, func(i, j int) bool {
		a, b := commits[i], commits[j]
		if a.TouchesFrame != b.TouchesFrame {
			return a.TouchesFrame
		}
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.Date.After(b.Date)
	})
}

var fixKeywords = []struct {
	re     *lazyregexp.Regexp
	word   string
	weight int
}{
	{lazyregexp.New(`(?i)\bdata[- ]?races?\b|\brac(e|y|es|ing)\b|\bthread[- ]safe`), "race", 5},
	{lazyregexp.New(`(?i)use[- ]after[- ]free|\buaf\b|dangling`), "use-after-free", 5},
	{lazyregexp.New(`(?i)\bdouble[- ]free\b`), "double-free", 5},
	{lazyregexp.New(`(?i)\bseg(fault|mentation fault|v)\b|\bsigsegv\b`), "segfault", 4},
	{lazyregexp.New(`(?i)\bcrash(es|ed|ing)?([^.\w/]|\.(\s|$)|$)`), "crash", 4}, // not "crash.c"
	{lazyregexp.New(`(?i)\bnull(ptr)?\b|\bnil\b`), "null", 3},
	{lazyregexp.New(`(?i)\bdeadlock|\bhang(s|ing)?\b`), "deadlock", 3},
	{lazyregexp.New(`(?i)\boverflow`), "overflow", 2},
	{lazyregexp.New(`(?i)\bfix(es|ed|ing)?\b`), "fix", 2},
	{lazyregexp.New(`(?i)^revert\b|\brevert(s|ed)?\b`), "revert", 2},
}

// fixScore scores how much a commit message reads like a crash fix.
func fixScore(msg string) (int, []string) {
	score := 0
	var words []string
	for _, k := range fixKeywords {
		if k.re.MatchString(msg) {
			score += k.weight
			words = append(words, k.word)
		}
	}
	return score, words
}

// Subject is the first line of a commit message.
func Subject(msg string) string {
	s, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	return strings.TrimSpace(s)
}
