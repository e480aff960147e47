package gitsrc

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/gitsrc/gitdiff"
	"github.com/faultline-dev/faultline/gitsrc/review"
)

// TestReviewMatchesGitLog holds the review to git itself on a history
// with the shapes that trip a naive walk: side branches whose merge kept
// the other side's file (a change and its revert; a merge with -s ours),
// real three-way merges, K&R and ANSI definitions, edits just inside and
// just outside functions, blank and brace lines that repeat everywhere.
// For every function of the file, the commits the review lists must be
// those of `git log BASE..main -- FILE` and the commits it marks as
// changing the function those of `git log -L START,END:FILE BASE..main` on
// the lines it reports at main.
func TestReviewMatchesGitLog(t *testing.T) {
	dir := t.TempDir()
	h := newHistoryBuilder(t, dir)
	h.generate(rand.New(rand.NewSource(22)), 90)
	base := strings.TrimSpace(h.git("rev-parse", "v1^{commit}"))
	wantFile := strings.Fields(h.git("log", "--format=%H", "v1..main", "--", "engine.c"))
	src := h.git("show", "v1:engine.c")
	funcs := definitions(gitdiff.SplitLines(src))
	if len(funcs) < 8 || len(wantFile) < 20 {
		t.Fatalf("generated history too small: %d functions, %d commits on the file", len(funcs), len(wantFile))
	}
	touched := 0
	for _, f := range funcs {
		fr, err := ReviewRepository(context.Background(), dir, ReviewRequest{Base: "v1", Head: "main", Path: "engine.c",
			Function: f.name, Line: f.lo, DeclLine: f.lo, LastLine: f.hi})
		if err != nil {
			t.Fatal(err)
		}
		if fr.Commit != base || fr.Extent != review.ExtentBinary {
			t.Fatalf("%s: reviewed from %s (%s extent)", f.name, fr.Commit, fr.Extent)
		}
		var all, fn []string
		for _, c := range fr.Commits {
			all = append(all, c.Commit)
			if c.TouchesFrame {
				fn = append(fn, c.Commit)
			}
		}
		if !sameSet(all, wantFile) {
			t.Errorf("%s: %d commits listed, git log -- engine.c lists %d; only ours %v, only git's %v",
				f.name, len(all), len(wantFile), setMinus(all, wantFile), setMinus(wantFile, all))
		}
		if fr.FunctionGone {
			continue
		}
		args := []string{"log", "--format=%H", "-s"}
		for _, r := range fr.HeadLines {
			args = append(args, fmt.Sprintf("-L%d,%d:%s", r[0], r[1], fr.HeadPath))
		}
		want := strings.Fields(h.git(append(args, "v1..main")...))
		if !sameSet(fn, want) {
			t.Errorf("%s (lines %d-%d, at main %v): %d commits change it, git log -L lists %d; only ours %v, only git's %v",
				f.name, f.lo, f.hi, fr.HeadLines, len(fn), len(want), setMinus(fn, want), setMinus(want, fn))
		}
		if len(want) > 0 {
			touched++
		}
	}
	if touched < 4 {
		t.Errorf("only %d functions were changed upstream: the history does not exercise the line walk", touched)
	}
}

// historyBuilder writes a generated history with the git command.
type historyBuilder struct {
	t     *testing.T
	dir   string
	funcs []genFunc // the file's functions on the current branch
	n     int       // commits made
}

// genFunc is one generated function: K&R or ANSI, with a body of lines.
type genFunc struct {
	name string
	kr   bool
	body []string
}

func newHistoryBuilder(t *testing.T, dir string) *historyBuilder {
	h := &historyBuilder{t: t, dir: dir}
	h.git("init", "-q", "-b", "main")
	return h
}

func (h *historyBuilder) git(args ...string) string {
	h.t.Helper()
	out, err := run(h.dir, "git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.org",
		"-c", "commit.gpgsign=false"}, args...)...)
	if err != nil {
		h.t.Fatal(err)
	}
	return out + "\n"
}

// render writes the file: functions separated by a blank line, each
// preceded by a comment, K&R ones with their parameter declarations.
func (h *historyBuilder) render() string {
	var b strings.Builder
	b.WriteString("#include \"engine.h\"\n\n")
	for _, f := range h.funcs {
		fmt.Fprintf(&b, "/* %s: part of the engine. */\n", f.name)
		if f.kr {
			fmt.Fprintf(&b, "int ZEXPORT %s(strm, flush)\nz_streamp strm;\nint flush;\n{\n", f.name)
		} else {
			fmt.Fprintf(&b, "static int %s(struct state *s, int n)\n{\n", f.name)
		}
		for _, l := range f.body {
			b.WriteString(l + "\n")
		}
		b.WriteString("}\n\n")
	}
	return b.String()
}

func (h *historyBuilder) commit(msg string) {
	h.n++
	if err := os.WriteFile(filepath.Join(h.dir, "engine.c"), []byte(h.render()), 0o644); err != nil {
		h.t.Fatal(err)
	}
	other := filepath.Join(h.dir, "other.c")
	if err := os.WriteFile(other, []byte(fmt.Sprintf("int other = %d;\n", h.n)), 0o644); err != nil {
		h.t.Fatal(err)
	}
	h.git("add", "-A")
	h.git("commit", "-q", "--allow-empty", "-m", msg)
}

// edit changes one function (or, with only nil, may add one between two),
// as a commit would.
func (h *historyBuilder) edit(r *rand.Rand, only func(int) bool) string {
	for {
		i := r.Intn(len(h.funcs))
		if only != nil && !only(i) {
			continue
		}
		f := &h.funcs[i]
		switch k := r.Intn(10); {
		case k < 4 && len(f.body) > 0: // change a line
			j := r.Intn(len(f.body))
			f.body[j] = fmt.Sprintf("\tn = n * %d + %d;", r.Intn(9)+1, h.n)
			return "Fix overflow in " + f.name
		case k < 6: // add a line (blank and brace lines repeat everywhere)
			j := r.Intn(len(f.body) + 1)
			add := []string{"", "\tif (n < 0) {", "\t\treturn -1;", "\t}"}
			if r.Intn(2) == 0 {
				add = []string{fmt.Sprintf("\ts->count += %d;", h.n)}
			}
			f.body = slices.Insert(f.body, j, add...)
			return "Check bounds in " + f.name
		case k < 7 && len(f.body) > 2: // remove lines
			j := r.Intn(len(f.body) - 1)
			f.body = slices.Delete(f.body, j, j+2)
			return "Simplify " + f.name
		case k < 9 && only == nil: // a new function next to it
			g := genFunc{name: fmt.Sprintf("helper_%d", h.n), body: []string{"\treturn n;"}}
			h.funcs = slices.Insert(h.funcs, i+1, g)
			return "Add " + g.name
		case k == 9: // K&R to ANSI, as zlib did
			f.kr = !f.kr
			return "Convert " + f.name + " to ANSI prototypes"
		}
	}
}

func (h *historyBuilder) generate(r *rand.Rand, steps int) {
	for i := 0; i < 10; i++ {
		body := []string{"\tint r = 0;", "", "\tif (n > 0) {", fmt.Sprintf("\t\tr = n + %d;", i), "\t}", "\treturn r;"}
		h.funcs = append(h.funcs, genFunc{name: fmt.Sprintf("step_%d", i), kr: i%3 == 0, body: body})
	}
	h.commit("Initial engine")
	h.commit(h.edit(r, nil))
	h.git("tag", "v1")
	for s := 0; s < steps; s++ {
		switch k := r.Intn(10); {
		case k < 6:
			h.commit(h.edit(r, nil))
		case k < 8:
			h.sideBranch(r, s)
		default:
			h.discardedBranch(r, s)
		}
	}
}

// sideBranch makes commits on a branch while main changes other
// functions, then merges them: a real three-way merge.
func (h *historyBuilder) sideBranch(r *rand.Rand, s int) {
	branch := fmt.Sprintf("side%d", s)
	saved := cloneFuncs(h.funcs)
	h.git("checkout", "-q", "-b", branch)
	half := len(h.funcs) / 2
	for range r.Intn(3) + 1 {
		h.commit(h.edit(r, func(i int) bool { return i >= half }))
	}
	side := cloneFuncs(h.funcs)
	h.git("checkout", "-q", "main")
	h.funcs = saved
	for range r.Intn(2) + 1 {
		h.commit(h.edit(r, func(i int) bool { return i < half-1 }))
	}
	// The merge's file: main's first half, the side's second half.
	merged := append(cloneFuncs(h.funcs[:half]), side[half:]...)
	h.git("merge", "-q", "--no-ff", "--no-commit", "-s", "ours", branch)
	h.funcs = merged
	h.commit("Merge branch " + branch)
}

// discardedBranch makes a branch whose merge keeps main's file: a change
// and its revert, or changes dropped by a merge with -s ours.
func (h *historyBuilder) discardedBranch(r *rand.Rand, s int) {
	branch := fmt.Sprintf("dropped%d", s)
	saved := cloneFuncs(h.funcs)
	h.git("checkout", "-q", "-b", branch)
	h.commit(h.edit(r, nil))
	if r.Intn(2) == 0 {
		h.funcs = cloneFuncs(saved)
		h.commit("Revert the last change")
	}
	h.git("checkout", "-q", "main")
	h.funcs = saved
	if r.Intn(2) == 0 {
		h.commit(h.edit(r, nil))
	}
	h.git("merge", "-q", "--no-ff", "-s", "ours", "-m", "Merge branch "+branch, branch)
}

func cloneFuncs(fs []genFunc) []genFunc {
	out := make([]genFunc, len(fs))
	for i, f := range fs {
		f.body = slices.Clone(f.body)
		out[i] = f
	}
	return out
}

// definitionSpan is a function definition found in a generated file.
type definitionSpan struct {
	name   string
	lo, hi int
}

// definitions lists the generated file's definitions: from the line
// naming the function to its closing brace.
func definitions(src []string) []definitionSpan {
	var out []definitionSpan
	for i, l := range src {
		if !strings.HasPrefix(l, "int ZEXPORT ") && !strings.HasPrefix(l, "static int ") {
			continue
		}
		name := strings.Fields(l[:strings.IndexByte(l, '(')])
		for j := i + 1; j < len(src); j++ {
			if src[j] == "}\n" {
				out = append(out, definitionSpan{name: name[len(name)-1], lo: i + 1, hi: j + 1})
				break
			}
		}
	}
	return out
}

func sameSet(a, b []string) bool {
	return len(setMinus(a, b)) == 0 && len(setMinus(b, a)) == 0 && len(a) == len(b)
}

func setMinus(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if !in[x] {
			out = append(out, x)
		}
	}
	return out
}
