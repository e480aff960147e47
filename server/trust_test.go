package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/gitsrc/gitsrctest"
	"github.com/faultline-dev/faultline/internal/boundtest"
	"github.com/faultline-dev/faultline/server"
)

// TestWorkspaceConfigCannotMoveWrites (issue 18 item 8): a faultline.json
// in the workspace folder names the crash program's repository and a
// cacheDir under a .ssh directory. faultline.fetchSources uses its rule but
// checks out under the user's cache, never under the file's cacheDir, and
// reports that it was ignored; the cacheDir of the user's settings
// (initializationOptions) is trusted.
func TestWorkspaceConfigCannotMoveWrites(t *testing.T) {
	f, err := gitsrctest.New("..")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	ws, home, xdg := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("XDG_CACHE_HOME", xdg)
	evil := filepath.Join(home, ".ssh")
	cfg := fmt.Sprintf(`{"components": [{"module": "crashy$", "name": "crashy", "repo": %q, "revision": "v1.0"}], "cacheDir": %q}`,
		f.GitURL+"crashy.git", evil)
	if err := os.WriteFile(filepath.Join(ws, "faultline.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	fetch := func(opts map[string]any) server.FetchSourcesResult {
		e := newEnvIn(t, ws, opts, server.Options{})
		var sum server.OpenSummary
		if err := e.Execute(server.CommandOpen, map[string]string{"dump": f.Core, "exe": f.Exe}, &sum); err != nil {
			t.Fatal(err)
		}
		var res server.FetchSourcesResult
		if err := e.Execute(server.CommandFetchSources, map[string]any{}, &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := fetch(map[string]any{})
	if _, err := os.Stat(evil); err == nil {
		t.Errorf("the workspace's faultline.json moved writes to %s", evil)
	}
	if len(res.Components) != 1 || !strings.HasPrefix(res.Components[0].Checkout, xdg+string(filepath.Separator)) {
		t.Errorf("components %+v; want the rule's repository checked out under %s", res.Components, xdg)
	}
	if !strings.Contains(fmt.Sprint(res.Problems), "cacheDir") {
		t.Errorf("no problem says the cacheDir was ignored: %+v", res.Problems)
	}
	trusted := t.TempDir()
	res = fetch(map[string]any{"cacheDir": trusted})
	if len(res.Components) != 1 || !strings.HasPrefix(res.Components[0].Checkout, trusted) || boundtest.DirBytes(trusted) == 0 {
		t.Errorf("the settings' cacheDir was not used: %+v", res.Components)
	}
}
