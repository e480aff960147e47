// Package gitsrcbench measures the upstream review of gitsrc on a large
// history: one file's review over 30,000 commits, which the issue targets
// at ≤ 2 s with a warm cache.
//
//	go test ./bench/gitsrc -run '^$' -bench Review -benchtime 5x
//
// The repository is generated once with git fast-import into
// $XDG_CACHE_HOME/faultline/bench/ (FAULTLINE_BENCH_DIR overrides).
package gitsrcbench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/gitsrc"
)

const (
	benchCommits = 30000
	// Every fixEvery-th commit changes the reviewed file; one in three of
	// those changes the crashing function.
	fixEvery = 150
)

func benchRepo(b *testing.B) string {
	b.Helper()
	dir := os.Getenv("FAULTLINE_BENCH_DIR")
	if dir == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			b.Skip("no cache dir:", err)
		}
		dir = filepath.Join(c, "faultline", "bench")
	}
	repo := filepath.Join(dir, fmt.Sprintf("review-%d.git", benchCommits))
	if _, err := os.Stat(filepath.Join(repo, "refs", "tags", "base")); err == nil {
		return repo
	}
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is needed to generate the benchmark repository")
	}
	tmp := repo + ".tmp"
	os.RemoveAll(tmp)
	if out, err := exec.Command("git", "init", "-q", "--bare", tmp).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v\n%s", err, out)
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GIT_DIR="+tmp)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(stdin, 1<<20)
	writeHistory(w)
	w.Flush()
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		b.Fatalf("git fast-import: %v", err)
	}
	if out, err := exec.Command("git", "-C", tmp, "symbolic-ref", "HEAD", "refs/heads/main").CombinedOutput(); err != nil {
		b.Fatalf("git symbolic-ref: %v\n%s", err, out)
	}
	if out, err := exec.Command("git", "-C", tmp, "repack", "-adq").CombinedOutput(); err != nil {
		b.Fatalf("git repack: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, repo); err != nil {
		b.Fatal(err)
	}
	return repo
}

// engine renders the reviewed file at version v: the crashing function
// step() sits between other functions, so changes land inside or outside it.
func engine(inside, outside int) string {
	var s strings.Builder
	s.WriteString("// engine.cc\n#include \"engine.h\"\n\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&s, "int helper%d(int x)\n{\n\treturn x + %d;\n}\n\n", i, i)
	}
	fmt.Fprintf(&s, "// outside edits: %d\n\n", outside)
	s.WriteString("int Engine::step(Node *n)\n{\n")
	fmt.Fprintf(&s, "\tint k = %d; // inside edits\n", inside)
	s.WriteString("\treturn n->value + k;\n}\n\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&s, "int tail%d(int x)\n{\n\treturn x * %d;\n}\n\n", i, i)
	}
	return s.String()
}

func writeHistory(w *bufio.Writer) {
	start := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	blob := func(mark int, data string) {
		fmt.Fprintf(w, "blob\nmark :%d\ndata %d\n%s\n", mark, len(data), data)
	}
	inside, outside := 0, 0
	mark, prevCommit := 1, 0
	for i := 1; i <= benchCommits; i++ {
		files := map[string]string{}
		msg := fmt.Sprintf("Tune module %d", i)
		switch {
		case i == 1:
			files["src/core/engine.cc"] = engine(0, 0)
			for d := 0; d < 20; d++ {
				files[fmt.Sprintf("src/mod%02d/impl.cc", d)] = "// impl\n"
			}
		case i%fixEvery == 0 && (i/fixEvery)%3 == 0:
			inside++
			files["src/core/engine.cc"] = engine(inside, outside)
			msg = fmt.Sprintf("Fix use-after-free in Engine::step (%d)", i)
		case i%fixEvery == 0:
			outside++
			files["src/core/engine.cc"] = engine(inside, outside)
			msg = fmt.Sprintf("Refactor engine helpers (%d)", i)
		default:
			files[fmt.Sprintf("src/mod%02d/impl.cc", i%20)] = fmt.Sprintf("// impl %d\n", i)
		}
		marks := map[string]int{}
		for p, data := range files {
			blob(mark, data)
			marks[p] = mark
			mark++
		}
		when := start.Add(time.Duration(i) * 10 * time.Minute).Unix()
		fmt.Fprintf(w, "commit refs/heads/main\nmark :%d\ncommitter Bench <bench@example.com> %d +0000\ndata %d\n%s\n", mark, when, len(msg), msg)
		if i > 1 {
			fmt.Fprintf(w, "from :%d\n", prevCommit)
		}
		for p, m := range marks {
			fmt.Fprintf(w, "M 100644 :%d %s\n", m, p)
		}
		w.WriteString("\n")
		prevCommit = mark
		mark++
		if i == 1 {
			fmt.Fprintf(w, "reset refs/tags/base\nfrom :%d\n\n", prevCommit)
		}
	}
}

func BenchmarkReview30k(b *testing.B) {
	repo := benchRepo(b)
	req := gitsrc.ReviewRequest{Base: "base", Head: "main", Path: "src/core/engine.cc", Function: "Engine::step", Line: 209,
		Review: gitsrc.ReviewOptions{MaxCommits: benchCommits + 10}}
	// Warm the cache (the OS page cache and nothing else: each iteration
	// opens the repository afresh, as a new faultline process would).
	fr, err := gitsrc.ReviewRepository(context.Background(), repo, req)
	if err != nil {
		b.Fatal(err)
	}
	wantAll := benchCommits / fixEvery
	touch := 0
	for _, c := range fr.Commits {
		if c.TouchesFrame {
			touch++
		}
	}
	if fr.Walked != benchCommits-1 || len(fr.Commits) != wantAll || touch != wantAll/3 {
		b.Fatalf("walked %d commits, %d changed the file, %d the function; want %d, %d, %d",
			fr.Walked, len(fr.Commits), touch, benchCommits-1, wantAll, wantAll/3)
	}
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if _, err := gitsrc.ReviewRepository(context.Background(), repo, req); err != nil {
			b.Fatal(err)
		}
	}
	per := time.Since(start) / time.Duration(b.N)
	b.ReportMetric(per.Seconds(), "s/review")
	b.Logf("one file's review over %d commits: %.2f s (target ≤ 2 s)", fr.Walked, per.Seconds())
}
