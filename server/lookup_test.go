package server_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/faultline-dev/faultline/internal/crashbuild"
	"github.com/faultline-dev/faultline/internal/debuginfodtest"
	"github.com/faultline-dev/faultline/server"
)

// openCulprit opens dump with exe and waits for the crash's Error
// diagnostic on want (crashbuild.CrashLine); it returns the summary and
// that diagnostic.
func openCulprit(t *testing.T, e *Env, dump, exe, want string) (server.OpenSummary, protocol.Diagnostic) {
	t.Helper()
	var sum server.OpenSummary
	if err := e.Execute(server.CommandOpen, map[string]string{"dump": dump, "exe": exe}, &sum); err != nil {
		t.Fatalf("faultline.open: %v", err)
	}
	u := uri.File(want)
	if sum.URI != string(u) || sum.Line != crashbuild.CrashLine || sum.Function != "crash_here" {
		t.Fatalf("open summary: %s:%d in %s, want %s:%d in crash_here (unresolved %q)",
			sum.URI, sum.Line, sum.Function, u, crashbuild.CrashLine, sum.Unresolved)
	}
	var culprit protocol.Diagnostic
	e.Await("the Error diagnostic on "+want, func(c *fakeClient) bool {
		for _, d := range c.diags[u] {
			if d.Severity == protocol.DiagnosticSeverityError && d.Range.Start.Line == crashbuild.CrashLine-1 {
				culprit = d
				return true
			}
		}
		return false
	})
	return sum, culprit
}

// TestSourceLookup: the culprit's diagnostic lands where gdb finds the
// file, with the program compiled here (DW_AT_comp_dir = its build
// directory, name src/crash.c): no workspace (rootUri and
// workspaceFolders null), workspaceFolders [] (Neovim 0.12's
// vim.lsp.enable without a root marker), a workspace without the sources
// (all three by comp_dir alone), a sourceMap rule (before comp_dir), two
// copies in the workspace (the comp_dir one, even with the executable
// beside the other), and two copies with the comp_dir gone (the copy
// nearest the executable).
func TestSourceLookup(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := crashbuild.Build(t, filepath.Join(tmp, "build"))
	empty := filepath.Join(tmp, "unrelated")
	writeFile(t, filepath.Join(empty, "README"), "not the sources\n")
	mapped := filepath.Join(tmp, "mapped")
	writeFile(t, filepath.Join(mapped, "src", "crash.c"), crashbuild.CrashSource)

	// Two copies, the comp_dir one inside the workspace.
	ws := filepath.Join(tmp, "ws")
	inWS := crashbuild.Build(t, filepath.Join(ws, "build"))
	other := filepath.Join(ws, "other")
	writeFile(t, filepath.Join(other, "src", "crash.c"), crashbuild.CrashSource)
	copyExe(t, inWS.Exe, filepath.Join(other, "bin", "crash"))

	// Two copies, the comp_dir gone.
	moved := crashbuild.Build(t, filepath.Join(tmp, "build2"))
	ws2 := filepath.Join(tmp, "two-copies")
	writeFile(t, filepath.Join(ws2, "a-old", "src", "crash.c"), crashbuild.CrashSource)
	writeFile(t, filepath.Join(ws2, "b-new", "src", "crash.c"), crashbuild.CrashSource)
	copyExe(t, moved.Exe, filepath.Join(ws2, "b-new", "bin", "crash"))
	if err := os.RemoveAll(filepath.Join(moved.Dir, "src")); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name      string
		folders   []string
		opts      map[string]any
		prog      crashbuild.Program
		exe, want string
		notOn     string // a copy that must get no diagnostic
	}{
		{"no workspace: comp_dir only", nil, nil, p, p.Exe, p.Source, ""},
		{"workspaceFolders []: comp_dir only", []string{}, nil, p, p.Exe, p.Source, ""},
		{"workspace without the sources: comp_dir", []string{empty}, nil, p, p.Exe, p.Source, ""},
		{"sourceMap before comp_dir", nil, map[string]any{"sourceMap": map[string]string{p.Dir: mapped}},
			p, p.Exe, filepath.Join(mapped, "src", "crash.c"), p.Source},
		{"two copies: the comp_dir one", []string{ws}, nil, inWS, filepath.Join(other, "bin", "crash"),
			inWS.Source, filepath.Join(other, "src", "crash.c")},
		{"two copies, comp_dir gone: nearest the executable", []string{ws2}, nil, moved, filepath.Join(ws2, "b-new", "bin", "crash"),
			filepath.Join(ws2, "b-new", "src", "crash.c"), filepath.Join(ws2, "a-old", "src", "crash.c")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := map[string]any{"offline": true, "cacheDir": t.TempDir()}
			for k, v := range c.opts {
				opts[k] = v
			}
			e := newEnvFolders(t, c.folders, opts, server.Options{})
			sum, d := openCulprit(t, e, c.prog.Core, c.exe, c.want)
			if len(sum.Unresolved) != 0 {
				t.Errorf("unresolved files %q", sum.Unresolved)
			}
			if strings.Contains(message(d), "fetched") {
				t.Errorf("a local file's diagnostic says fetched: %q", message(d))
			}
			if c.notOn != "" {
				if ds := e.Diagnostics(uri.File(c.notOn)); len(ds) != 0 {
					t.Errorf("%d diagnostics on the other copy %s", len(ds), c.notOn)
				}
			}
		})
	}
}

// TestDebuginfodSource: gdb's last step. A program built here whose
// sources were moved away, Debian's debuginfod (started here on
// 127.0.0.1, in a private network namespace) still serving them: with
// DEBUGINFOD_URLS set and no workspace, the culprit's Error diagnostic
// lands on the copy fetched into the debuginfod cache, which is read-only
// and marked as fetched; with "offline" nothing is fetched and the file is
// reported as not on this machine.
func TestDebuginfodSource(t *testing.T) {
	if !debuginfodtest.InNetNS(t) {
		return
	}
	p := debuginfodtest.StartSourcesAway(t)
	offline := newEnvFolders(t, nil, map[string]any{"offline": true}, server.Options{})
	var sum server.OpenSummary
	if err := offline.Execute(server.CommandOpen, map[string]string{"dump": p.Core, "exe": p.Exe}, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.URI != "" || !slices.Contains(sum.Unresolved, "src/crash.c") {
		t.Errorf("offline: culprit at %q, unresolved %q; want src/crash.c unresolved", sum.URI, sum.Unresolved)
	}

	e := newEnvFolders(t, nil, nil, server.Options{})
	_, d := openCulprit(t, e, p.Core, p.Exe, p.Fetched)
	if !strings.Contains(message(d), "[read-only source fetched from debuginfod "+p.Server.URL+"]") {
		t.Errorf("culprit diagnostic not marked as fetched: %q", message(d))
	}
	p.CheckFetched(t)
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyExe(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dst, string(b))
	if err := os.Chmod(dst, 0o755); err != nil {
		t.Fatal(err)
	}
}
