package gitsrc

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis"
)

// TestPathTraversal: DWARF paths that climb out with "..", and a served
// repository whose tree holds a ".." entry and a symlink leading out,
// write nothing outside the cache.
func TestPathTraversal(t *testing.T) {
	f := getFixture(t)
	outside := t.TempDir() // a directory outside the cache that must stay empty
	cacheDir := t.TempDir()

	// Hostile repositories, served like the others: one whose tree holds a
	// ".." entry (go-git refuses it while reading the tree), one with a
	// symlink leading out of the checkout (never written).
	for _, tc := range []struct {
		name     string
		dotdot   bool
		wantFile bool
	}{{"evil-dotdot", true, false}, {"evil-link", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			evil := filepath.Join(f.dir, "srv", tc.name+".git")
			if _, err := run(f.dir, "git", "init", "-q", "--bare", evil); err != nil {
				t.Fatal(err)
			}
			crashBlob := mustGit(t, evil, []byte(gitShow(t, f, "v1.0:src/crashy/crash.c")), "hash-object", "-w", "--stdin")
			pwned := mustGit(t, evil, []byte("pwned\n"), "hash-object", "-w", "--stdin")
			link := mustGit(t, evil, []byte(outside), "hash-object", "-w", "--stdin")
			crashy := mktree(t, evil, []treeEntry{{"100644", "crash.c", crashBlob}})
			src := mktree(t, evil, []treeEntry{{"40000", "crashy", crashy}})
			ents := []treeEntry{{"120000", "escape", link}, {"100644", "pwned.txt", pwned}, {"40000", "src", src}}
			if tc.dotdot {
				dotdot := mktree(t, evil, []treeEntry{{"100644", "pwned.txt", pwned}})
				ents = append([]treeEntry{{"40000", "..", dotdot}}, ents[0], ents[2])
			}
			root := mktree(t, evil, ents)
			commit := mustGit(t, evil, nil, "-c", "user.name=E", "-c", "user.email=e@example.com", "commit-tree", root, "-m", "evil")
			if _, err := run(evil, "git", "update-ref", "refs/heads/main", commit); err != nil {
				t.Fatal(err)
			}
			run(evil, "git", "symbolic-ref", "HEAD", "refs/heads/main")
			cfg, err := ParseConfig([]byte(`{"components": [{"module": "crashy$", "repo": "` + f.httpURL + tc.name + `.git", "revision": "main"}]}`))
			if err != nil {
				t.Fatal(err)
			}
			// Frames whose DWARF file names climb out of any prefix.
			c := copyCrash(f.crash)
			for ti := range c.Threads {
				for fi := range c.Threads[ti].Frames {
					fr := &c.Threads[ti].Frames[fi]
					if fr.File != "" {
						fr.File = buildPrefix + "/../../../../../../../../.." + outside + "/" + filepath.Base(fr.File)
					}
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := Resolve(ctx, c, Options{Config: cfg, CacheDir: cacheDir})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("frames %d, problems %+v", len(res.Frames), res.Problems)
			if ents, _ := os.ReadDir(outside); len(ents) != 0 {
				t.Fatalf("files written outside the cache: %v", ents)
			}
			if _, err := os.Stat(filepath.Join(f.dir, "srv", "pwned.txt")); err == nil {
				t.Fatal("pwned.txt written next to the served repositories")
			}
			filepath.WalkDir(cacheDir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.Type()&fs.ModeSymlink != 0 {
					t.Errorf("symlink in the cache: %s", p)
				}
				if err == nil && d.Name() == "pwned.txt" && filepath.Base(filepath.Dir(p)) != res.Components[0].Commit {
					t.Errorf("pwned.txt written outside its checkout's root: %s", p)
				}
				return nil
			})
			if !tc.wantFile {
				if len(res.Frames) != 0 || len(res.Problems) == 0 {
					t.Errorf("hostile tree accepted: frames %+v problems %+v", res.Frames, res.Problems)
				}
				return
			}
			fs := findFrame(t, res, "parse_record")
			if fs.Source != filepath.Join(res.Components[0].Checkout, "src/crashy/crash.c") || !strings.HasPrefix(fs.Source, cacheDir+string(os.PathSeparator)) {
				t.Errorf("parse_record source %s", fs.Source)
			}
			if _, err := os.Lstat(filepath.Join(res.Components[0].Checkout, "escape")); err == nil {
				t.Error("the symlink was written")
			}
		})
	}
}

type treeEntry struct{ mode, name, hash string }

// mktree writes a tree object as is (git mktree would refuse ".." names).
func mktree(t *testing.T, repo string, ents []treeEntry) string {
	t.Helper()
	var b bytes.Buffer
	for _, e := range ents {
		raw, _ := hex.DecodeString(e.hash)
		b.WriteString(e.mode + " " + e.name + "\x00")
		b.Write(raw)
	}
	return mustGit(t, repo, b.Bytes(), "hash-object", "-w", "--literally", "-t", "tree", "--stdin")
}

func mustGit(t *testing.T, repo string, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"--git-dir=" + repo}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func copyCrash(c *analysis.Crash) *analysis.Crash {
	cp := *c
	cp.Threads = append([]analysis.Thread(nil), c.Threads...)
	for i := range cp.Threads {
		cp.Threads[i].Frames = append([]analysis.Frame(nil), c.Threads[i].Frames...)
	}
	return &cp
}

// TestConcurrentProcesses: two faultline processes resolving into one cold
// cache at once both succeed, agree, and leave one complete checkout.
func TestConcurrentProcesses(t *testing.T) {
	f := getFixture(t)
	cacheDir := t.TempDir()
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperResolve$")
		cmd.Env = append(os.Environ(), "GITSRC_HELPER_CORE="+f.core, "GITSRC_HELPER_EXE="+f.exe, "GITSRC_HELPER_CACHE="+cacheDir)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	var results []Result
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, outs[i])
		}
		line := outs[i].String()
		start := strings.Index(line, "RESULT ")
		if start < 0 {
			t.Fatalf("process %d printed no result:\n%s", i, line)
		}
		end := strings.IndexByte(line[start:], '\n')
		var r Result
		if err := json.Unmarshal([]byte(line[start+7:start+end]), &r); err != nil {
			t.Fatal(err)
		}
		results = append(results, r)
	}
	a, b := results[0], results[1]
	if len(a.Components) != 1 || len(b.Components) != 1 || a.Components[0].Commit != f.rev["v1.0"] ||
		a.Components[0].Commit != b.Components[0].Commit || a.Components[0].Checkout != b.Components[0].Checkout {
		t.Fatalf("processes disagree: %+v / %+v (problems %+v / %+v)", a.Components, b.Components, a.Problems, b.Problems)
	}
	got, err := os.ReadFile(filepath.Join(a.Components[0].Checkout, "src/crashy/crash.c"))
	if err != nil || string(got) != gitShow(t, f, "v1.0:src/crashy/crash.c") {
		t.Errorf("shared checkout: %v", err)
	}
	// No temporary or partial directories are left behind.
	filepath.WalkDir(cacheDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && (strings.HasPrefix(d.Name(), ".partial-") || strings.HasPrefix(d.Name(), ".init-") || strings.HasPrefix(d.Name(), ".tmp-")) {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
}

// TestHelperResolve is TestConcurrentProcesses's child process.
func TestHelperResolve(t *testing.T) {
	core := os.Getenv("GITSRC_HELPER_CORE")
	if core == "" {
		t.Skip("child process of TestConcurrentProcesses")
	}
	c, err := analysis.Open(core, analysis.Options{Exe: os.Getenv("GITSRC_HELPER_EXE")})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Resolve(context.Background(), c, Options{CacheDir: os.Getenv("GITSRC_HELPER_CACHE"), Review: ReviewOptions{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	os.Stdout.Write(append(append([]byte("RESULT "), b...), '\n'))
}
