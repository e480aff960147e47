package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/faultline-dev/faultline/gitsrc/gitsrctest"
	"github.com/faultline-dev/faultline/server"
)

// gitLines runs git in dir and returns its output's lines.
func gitLines(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	out, err := gitsrctest.Run(dir, "git", args...)
	if err != nil {
		t.Fatal(err)
	}
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// TestFetchSources: a crash program built from the v1.0 tag of a
// repository served by a real git daemon, under a fake build prefix, shows
// nowhere until faultline.fetchSources checks v1.0 out (the component
// named by faultline.json at the workspace root) into initializationOptions'
// cacheDir; then its diagnostics land in the checkout, the crashing function
// gets a lens counting the upstream commits that changed it (as `git log -L`
// counts them), the lens opens the fix's patch (as `git show` prints its
// lines), and the hover shows the commit messages and hunks.
func TestFetchSources(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a crash program and serves git")
	}
	f, err := gitsrctest.New("..")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)

	ws := t.TempDir()
	repo := f.GitURL + "crashy.git"
	cfg := fmt.Sprintf(`{"components": [{"module": "crashy$", "name": "crashy", "repo": %q, "revision": "v1.0"}]}`, repo)
	if err := os.WriteFile(filepath.Join(ws, "faultline.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	e := newEnvIn(t, ws, map[string]any{"cacheDir": cache}, server.Options{})
	var sum server.OpenSummary
	if err := e.Execute(server.CommandOpen, map[string]string{"dump": f.Core, "exe": f.Exe}, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Function != "parse_record" || sum.URI != "" || !strings.HasPrefix(sum.File, gitsrctest.BuildPrefix+"/") {
		t.Fatalf("before fetching: summary %+v; want parse_record under the build prefix, with no local file", sum)
	}

	var res server.FetchSourcesResult
	if err := e.Execute(server.CommandFetchSources, map[string]any{}, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Components) != 1 || len(res.Problems) != 0 {
		t.Fatalf("fetchSources = %+v", res)
	}
	comp := res.Components[0]
	if comp.Repo != repo || comp.Origin != "config" || comp.Revision != "v1.0" || comp.Commit != f.Rev["v1.0"] ||
		!strings.HasPrefix(comp.Checkout, cache+string(filepath.Separator)) {
		t.Errorf("component %+v; want %s v1.0 (%s) from faultline.json, checked out under %s", comp, repo, f.Rev["v1.0"], cache)
	}
	crashC := filepath.Join(comp.Checkout, "src", "crashy", "crash.c")
	src := uri.File(crashC)
	if got, err := os.ReadFile(crashC); err != nil || string(got) != strings.Join(gitLines(t, f.Work, "show", "v1.0:src/crashy/crash.c"), "\n")+"\n" {
		t.Errorf("checkout's crash.c differs from git show v1.0:src/crashy/crash.c (%v)", err)
	}

	// Progress: begin, what gitsrc is doing, end.
	e.Await("fetch progress end", func(c *fakeClient) bool {
		for tok, title := range c.titles {
			kinds := c.progress[tok]
			if title == "faultline: fetching sources" && kinds[len(kinds)-1] == "end" {
				return strings.Contains(strings.Join(c.reports[tok], "\n"), "fetching crashy v1.0")
			}
		}
		return false
	})

	// The crash line of the model, now in the checkout.
	line := 0
	for _, th := range f.Crash.Threads {
		for _, fr := range th.Frames {
			if fr.Function == "parse_record" {
				line = fr.Line
			}
		}
	}
	e.Await("diagnostics in the checkout", func(c *fakeClient) bool { return len(c.diags[src]) > 0 })
	var culprit *protocol.Diagnostic
	for i, d := range e.Diagnostics(src) {
		if d.Severity == protocol.DiagnosticSeverityError {
			culprit = &e.Diagnostics(src)[i]
		}
	}
	if culprit == nil || int(culprit.Range.Start.Line)+1 != line ||
		!strings.Contains(message(*culprit), "\nSIGSEGV: NULL pointer read at 0x") ||
		!strings.HasSuffix(message(*culprit), fmt.Sprintf("in parse_record — thread %d, frame #0", sum.Thread)) {
		t.Fatalf("culprit diagnostic %+v; want an Error on line %d", culprit, line)
	}

	// The lens over parse_record counts what `git log -L` counts.
	touching := gitLines(t, f.Work, "log", "--format=%H %s", "-s", "-L", ":parse_record:src/crashy/crash.c", "v1.0..main")
	fileCommits := gitLines(t, f.Work, "log", "--format=%H", "v1.0..main", "--", "src/crashy/crash.c")
	if len(touching) != 1 || len(fileCommits) != 2 {
		t.Fatalf("git log -L: %q; git log -- crash.c: %q", touching, fileCommits)
	}
	fixHash, fixSubject, _ := strings.Cut(touching[0], " ")
	lenses, err := e.Server.CodeLens(e.ctx, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: src}})
	if err != nil {
		t.Fatal(err)
	}
	var up *protocol.CodeLens
	for i, l := range lenses {
		if strings.Contains(l.Command.Title, "upstream") {
			up = &lenses[i]
		}
	}
	wantTitle := "1 upstream commit since v1.0 changed parse_record(): " + fixHash[:8] + " " + fixSubject
	if up == nil || !strings.HasPrefix(up.Command.Title, wantTitle) || up.Command.Command != server.CommandShowCommit {
		t.Fatalf("upstream lens %+v; want %q", up, wantTitle)
	}
	start := gitLines(t, f.Work, "grep", "-n", "^int parse_record", "v1.0", "--", "src/crashy/crash.c")
	if len(start) != 1 || !strings.HasSuffix(strings.SplitN(start[0], ":", 4)[2], fmt.Sprint(up.Range.Start.Line+1)) {
		t.Errorf("upstream lens on line %d; git grep finds parse_record at %q", up.Range.Start.Line+1, start)
	}
	var arg server.ShowCommitArgs
	json.Unmarshal(up.Command.Arguments[0], &arg)
	if arg.Repo != repo || arg.Commit != fixHash {
		t.Errorf("lens argument %+v; want %s %s", arg, repo, fixHash)
	}

	// The lens writes the fix's patch and opens it.
	var shown map[string]any
	if err := e.Execute(up.Command.Command, arg, &shown); err != nil {
		t.Fatal(err)
	}
	patchPath, _ := shown["path"].(string)
	patch, err := os.ReadFile(patchPath)
	if err != nil {
		t.Fatalf("showCommit %v: %v", shown, err)
	}
	for _, l := range gitLines(t, f.Work, "show", "--format=", fixHash) {
		if (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) && !strings.Contains(string(patch), l) {
			t.Errorf("patch %s lacks git show's line %q", patchPath, l)
		}
	}
	if err := e.Execute(server.CommandShowCommit, server.ShowCommitArgs{Repo: repo, Commit: "HEAD~1"}, nil); err == nil ||
		!strings.Contains(err.Error(), "not a full commit hash") {
		t.Errorf("showCommit of a revision expression: %v", err)
	}
	if err := e.Execute(server.CommandShowCommit, map[string]string{"repo": repo}, nil); err == nil {
		t.Error("showCommit without a commit succeeded")
	}
	e.Await("the patch shown", func(c *fakeClient) bool {
		n := len(c.shown)
		return n > 0 && c.shown[n-1].URI == uri.File(patchPath)
	})

	// Hover on the crash line: the frame, then the upstream commits with
	// their messages and hunks; on another line of the function, the
	// upstream section alone.
	body := strings.Join(gitLines(t, f.Work, "log", "-1", "--format=%b", fixHash), "\n")
	for _, ln := range []int{line, int(up.Range.Start.Line) + 2} {
		h, err := e.Server.Hover(e.ctx, &protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
			TextDocument: protocol.TextDocumentIdentifier{URI: src}, Position: protocol.Position{Line: uint32(ln - 1)}}})
		if err != nil {
			t.Fatal(err)
		}
		md := hoverText(h)
		for _, s := range []string{"**Upstream** · `parse_record` since `v1.0`", "1 upstream commit since v1.0 changed parse_record()", "changes the function", "changes the file only",
			fixHash[:12] + "` " + fixSubject, body, "```diff\n", "+\tif (r == NULL)"} {
			if !strings.Contains(md, s) {
				t.Errorf("hover on line %d lacks %q:\n%s", ln, s, md)
			}
		}
		if frameHover := strings.Contains(md, "**#0 `parse_record`**"); frameHover != (ln == line) {
			t.Errorf("hover on line %d: frame section shown = %v", ln, frameHover)
		}
	}
	if err := e.Shutdown(); err != nil {
		t.Error(err)
	}

	// Offline, the same cache answers alone; a cold cache reports what is
	// missing instead of touching the network, and initializationOptions'
	// sourceMap still maps the build prefix (onto the build tree).
	prefixed := 0
	for _, th := range f.Crash.Threads {
		for _, fr := range th.Frames {
			if strings.HasPrefix(fr.File, gitsrctest.BuildPrefix+"/") {
				prefixed++
			}
		}
	}
	if prefixed < 3 {
		t.Fatalf("%d frames under the build prefix, want parse_record, run_records and main", prefixed)
	}
	for _, tc := range []struct {
		cache string
		warm  bool
	}{{cache, true}, {t.TempDir(), false}} {
		opts := map[string]any{"cacheDir": tc.cache, "offline": true}
		if !tc.warm {
			opts["sourceMap"] = map[string]string{gitsrctest.BuildPrefix: filepath.Join(f.Dir, "build")}
		}
		e := newEnvIn(t, ws, opts, server.Options{})
		if err := e.Execute(server.CommandOpen, map[string]string{"dump": f.Core, "exe": f.Exe}, nil); err != nil {
			t.Fatal(err)
		}
		var res server.FetchSourcesResult
		if err := e.Execute(server.CommandFetchSources, map[string]any{}, &res); err != nil {
			t.Fatal(err)
		}
		if tc.warm && (len(res.Components) != 1 || res.Components[0].Commit != f.Rev["v1.0"] || len(res.Upstream) == 0 ||
			res.Upstream[0].Touching != 1) {
			t.Errorf("offline, warm cache: %+v", res)
		}
		if !tc.warm {
			if res.Mapped != prefixed || len(res.Problems) == 0 || !strings.Contains(res.Problems[0], "offline") {
				t.Errorf("offline, cold cache: %+v", res)
			}
			e.Await("the problems shown", func(c *fakeClient) bool {
				for _, m := range c.messages {
					if m.Type == protocol.MessageTypeWarning && strings.Contains(m.Message, "fetching sources: ") {
						return true
					}
				}
				return false
			})
		}
		if err := e.Shutdown(); err != nil {
			t.Error(err)
		}
	}
}
