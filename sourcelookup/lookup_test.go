package sourcelookup

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/faultline-dev/faultline/analysis/model"
)

// tree writes files (relative to dir) and returns dir with symlinks
// resolved, as Resolve returns paths.
func tree(t *testing.T, files ...string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("int x;\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestResolveOrder(t *testing.T) {
	build := tree(t, "proj/src/a.c", "proj/bin/prog")
	ws := tree(t, "checkout/src/a.c", "other/a.c", "old/src/a.c", "new/bin/prog", "new/src/a.c")
	compDirFrame := &model.Frame{File: "src/a.c", CompDir: filepath.Join(build, "proj")}
	cases := []struct {
		name string
		cfg  Config
		fr   *model.Frame
		exe  string
		want string
	}{
		{"no workspace: comp_dir/name", Config{}, compDirFrame, "", filepath.Join(build, "proj/src/a.c")},
		{"empty workspaceFolders: comp_dir/name", Config{Folders: []string{}}, compDirFrame, "", filepath.Join(build, "proj/src/a.c")},
		{"workspace without the sources: comp_dir/name", Config{Folders: []string{tree(t, "unrelated.c")}}, compDirFrame, "", filepath.Join(build, "proj/src/a.c")},
		{"comp_dir inside the workspace wins over other copies", Config{Folders: []string{ws}},
			&model.Frame{File: "src/a.c", CompDir: filepath.Join(ws, "old")}, filepath.Join(ws, "new/bin/prog"), filepath.Join(ws, "old/src/a.c")},
		{"two copies: the one nearest the executable", Config{Folders: []string{ws}},
			&model.Frame{File: "src/a.c", CompDir: "/nonexistent/build"}, filepath.Join(ws, "new/bin/prog"), filepath.Join(ws, "new/src/a.c")},
		{"two copies, no executable: the shortest path", Config{Folders: []string{ws}},
			&model.Frame{File: "src/a.c", CompDir: "/nonexistent/build"}, "", filepath.Join(ws, "new/src/a.c")},
		{"sourceMap before comp_dir", Config{SourceMap: map[string]string{filepath.Join(build, "proj"): filepath.Join(ws, "checkout")}},
			compDirFrame, "", filepath.Join(ws, "checkout/src/a.c")},
		{"sourceMap on an absolute name", Config{SourceMap: map[string]string{"/buildbot/x": filepath.Join(ws, "checkout")}},
			&model.Frame{File: "/buildbot/x/src/a.c"}, "", filepath.Join(ws, "checkout/src/a.c")},
		{"relative name joined to a folder", Config{Folders: []string{filepath.Join(ws, "checkout")}},
			&model.Frame{File: "src/a.c"}, "", filepath.Join(ws, "checkout/src/a.c")},
		{"checkout (Frame.Source) first", Config{}, &model.Frame{File: "src/a.c", CompDir: filepath.Join(build, "proj"),
			Source: filepath.Join(ws, "other/a.c")}, "", filepath.Join(ws, "other/a.c")},
		{"nowhere", Config{}, &model.Frame{File: "src/missing.c", CompDir: build}, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := New(c.cfg).Resolve(c.fr, c.exe); got != c.want {
				t.Errorf("Resolve = %q, want %q", got, c.want)
			}
		})
	}
}
