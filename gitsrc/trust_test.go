package gitsrc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/boundtest"
)

// TestFoundConfigCannotMoveWrites (issue 18 item 8): a faultline.json in
// the working directory names the crash program's repository (a rule it
// may add) and a cacheDir under a .ssh directory (a write location it may
// not choose). `faultline sources` uses the rule, writes only under the
// user's cache ($XDG_CACHE_HOME) and says the cacheDir was ignored; the
// same file named with --config is trusted and its cacheDir used.
func TestFoundConfigCannotMoveWrites(t *testing.T) {
	f := getFixture(t)
	cwd, home, xdg := t.TempDir(), t.TempDir(), t.TempDir()
	evil := filepath.Join(home, ".ssh")
	cfg := `{"components": [{"module": "crashy$", "name": "crashy", "repo": "` + f.httpURL + `crashy.git", "revision": "v1.0"}],
 "cacheDir": "` + evil + `"}`
	if err := os.WriteFile(filepath.Join(cwd, ConfigFileName), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	sources := func(extra ...string) boundtest.Result {
		args := append([]string{"sources", "--json", "--quiet", "--no-review", "--exe", f.exe}, extra...)
		r := boundtest.Run(t, boundtest.Cmd{Args: append(args, f.core), Dir: cwd, Env: []string{"XDG_CACHE_HOME=" + xdg},
			Limits: boundtest.Limits{Wall: 60 * time.Second}})
		if r.Killed != "" || r.Exit != 0 {
			t.Fatalf("%v\n%s", r, r.Stderr)
		}
		return r
	}
	r := sources()
	if _, err := os.Stat(evil); err == nil {
		t.Errorf("a found faultline.json moved writes to %s (%d bytes there)", evil, boundtest.DirBytes(evil))
	}
	if !strings.Contains(r.Stdout, `"origin": "config"`) || boundtest.DirBytes(filepath.Join(xdg, "faultline")) == 0 {
		t.Errorf("the found file's rule was not used with the user's cache:\n%.2000s", r.Stdout)
	}
	if !strings.Contains(r.Stdout, "cacheDir") || !strings.Contains(r.Stdout, "ignored") {
		t.Errorf("no problem says the found cacheDir was ignored:\n%.2000s", r.Stdout)
	}
	sources("--config", filepath.Join(cwd, ConfigFileName))
	if boundtest.DirBytes(evil) == 0 {
		t.Errorf("the cacheDir of a config named with --config was not used")
	}
}
