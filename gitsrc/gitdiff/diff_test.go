package gitdiff

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// TestBoundedLineDiff: the diff gives git's hunks on small inputs and
// treats an oversized middle as one replacement, quickly.
func TestBoundedLineDiff(t *testing.T) {
	h, exact := Diff(context.Background(), "a\nb\nc\nd\ne\n", "a\nb\nX\nd\ne\nf\n")
	if want := []Hunk{{2, 1, 2, 1}, {5, 0, 5, 1}}; !exact || fmt.Sprint(h) != fmt.Sprint(want) {
		t.Errorf("hunks %v (exact %v), want %v", h, exact, want)
	}
	// The same lines in reverse order: every line matches somewhere, and
	// the middle is over MaxLines.
	var big1, big2 strings.Builder
	for i := range MaxLines {
		fmt.Fprintf(&big1, "x%d\n", i)
		fmt.Fprintf(&big2, "x%d\n", MaxLines-1-i)
	}
	start := time.Now()
	h, exact = Diff(context.Background(), "head\n"+big1.String()+"tail\n", "head\n"+big2.String()+"tail\n")
	if want := []Hunk{{1, MaxLines, 1, MaxLines}}; exact || fmt.Sprint(h) != fmt.Sprint(want) || time.Since(start) > 10*time.Second {
		t.Errorf("oversized middle: %v (exact %v) in %v, want %v", h, exact, time.Since(start), want)
	}
}

// TestDiffMatchesGit holds Diff to git's own: `git diff --no-index -U0`
// with the algorithm line-log uses (Myers, no indent heuristic) on
// generated pairs of C-like files whose lines repeat a lot (blank lines,
// braces: the lines git discards among unmatched ones), with edits
// anywhere, and long common tails (git trims them before diffing).
func TestDiffMatchesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed (apt-get install git)")
	}
	dir := t.TempDir()
	r := rand.New(rand.NewSource(7))
	for i := range 120 {
		old := genFile(r, 40+r.Intn(400))
		new := mutate(r, old)
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		os.WriteFile(a, []byte(strings.Join(old, "")), 0o644)
		os.WriteFile(b, []byte(strings.Join(new, "")), 0o644)
		out, _ := exec.Command("git", "diff", "--no-index", "-U0", "--no-indent-heuristic", "--diff-algorithm=myers", a, b).Output()
		want := parseUnified(string(out))
		got, exact := Diff(context.Background(), strings.Join(old, ""), strings.Join(new, ""))
		if !exact || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("pair %d: Diff %v (exact %v)\ngit  %v", i, got, exact, want)
		}
	}
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// parseUnified reads the hunk headers of a -U0 diff as Hunks.
func parseUnified(diff string) []Hunk {
	var hs []Hunk
	for _, l := range strings.Split(diff, "\n") {
		m := hunkHeader.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		num := func(s string, d int) int {
			if s == "" {
				return d
			}
			v, _ := strconv.Atoi(s)
			return v
		}
		h := Hunk{A: num(m[1], 0), NA: num(m[2], 1), B: num(m[3], 0), NB: num(m[4], 1)}
		// A side with lines starts at its first line (1-based); an empty
		// side names the line it follows.
		if h.NA > 0 {
			h.A--
		}
		if h.NB > 0 {
			h.B--
		}
		hs = append(hs, h)
	}
	return hs
}

// genFile makes n lines of C-like text, most lines repeated often.
func genFile(r *rand.Rand, n int) []string {
	common := []string{"\n", "{\n", "}\n", "\treturn 0;\n", "\t}\n", "#endif\n", "\tint i;\n"}
	out := make([]string, n)
	for i := range out {
		if r.Intn(3) > 0 {
			out[i] = common[r.Intn(len(common))]
		} else {
			out[i] = fmt.Sprintf("\tx%d = f(%d);\n", r.Intn(60), r.Intn(9))
		}
	}
	if r.Intn(4) == 0 {
		out[n-1] = strings.TrimSuffix(out[n-1], "\n") // no newline at the end
	}
	return out
}

// mutate inserts, deletes and replaces runs of lines.
func mutate(r *rand.Rand, in []string) []string {
	out := append([]string(nil), in...)
	for range 1 + r.Intn(8) {
		i := r.Intn(len(out) + 1)
		switch r.Intn(3) {
		case 0:
			out = slices.Insert(out, i, genFile(r, 1+r.Intn(12))...)
		case 1:
			if i < len(out) {
				out = slices.Delete(out, i, min(len(out), i+1+r.Intn(10)))
			}
		default:
			if i < len(out) {
				out[i] = fmt.Sprintf("\ty = g(%d);\n", r.Intn(5))
			}
		}
	}
	if len(out) > 0 && !strings.HasSuffix(out[len(out)-1], "\n") && len(out) < len(in) {
		out[len(out)-1] += "\n"
	}
	return out
}

// TestMapBack: lines carried to the parent as git log -L carries them —
// a deletion strictly inside the lines cuts them and shifts the rest; an
// insertion at their edge does not touch them.
func TestMapBack(t *testing.T) {
	rs := Ranges{{Lo: 1083, Hi: 1108}}
	got, touched := rs.MapBack([]Hunk{{A: 1094, NA: 2, B: 1094, NB: 0}})
	if want := (Ranges{{Lo: 1083, Hi: 1110}}); fmt.Sprint(got) != fmt.Sprint(want) || len(touched) != 1 {
		t.Errorf("deletion inside: %v touched %v, want %v touched", got, touched, want)
	}
	got, touched = rs.MapBack([]Hunk{{A: 1083, NA: 0, B: 1083, NB: 3}})
	if fmt.Sprint(got) != fmt.Sprint(Ranges{{Lo: 1083, Hi: 1105}}) || len(touched) != 1 {
		t.Errorf("insertion at the first line: %v touched %v", got, touched)
	}
	got, touched = rs.MapBack([]Hunk{{A: 1090, NA: 0, B: 1108, NB: 0}, {A: 1100, NA: 1, B: 1120, NB: 1}})
	if fmt.Sprint(got) != fmt.Sprint(rs) || len(touched) != 0 {
		t.Errorf("hunks outside: %v touched %v", got, touched)
	}
	if fw := (Ranges{{Lo: 10, Hi: 20}}).MapForward([]Hunk{{A: 10, NA: 0, B: 10, NB: 2}, {A: 15, NA: 1, B: 17, NB: 3}, {A: 20, NA: 0, B: 24, NB: 5}}); fmt.Sprint(fw) != fmt.Sprint(Ranges{{Lo: 12, Hi: 24}}) {
		t.Errorf("MapForward = %v", fw)
	}
}

func FuzzDiff(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nc\nd\n"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		fuzzbudget.Check(t, len(a)+len(b), fuzzbudget.Default, func() {
			hunks, _ := Diff(context.Background(), string(a), string(b))
			na, nb := len(SplitLines(string(a))), len(SplitLines(string(b)))
			for _, h := range hunks {
				if h.A < 0 || h.B < 0 || h.A+h.NA > na || h.B+h.NB > nb {
					t.Fatalf("hunk %+v outside %d/%d lines", h, na, nb)
				}
			}
		})
	})
}
