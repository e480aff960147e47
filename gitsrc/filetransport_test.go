package gitsrc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/boundtest"
)

// TestFileURLRunsNoGit (issue 24 item 8): a found faultline.json naming a
// file:// repository is fetched in-process. go-git's default file://
// transport runs git-upload-pack from PATH; here PATH starts with a
// directory whose git, git-upload-pack and git-receive-pack only record
// that they ran, and `faultline sources` must still resolve the revision
// without running any of them.
func TestFileURLRunsNoGit(t *testing.T) {
	f := getFixture(t)
	shim, cwd, xdg := t.TempDir(), t.TempDir(), t.TempDir()
	record := filepath.Join(shim, "ran")
	for _, name := range []string{"git", "git-upload-pack", "git-receive-pack", "git-upload-archive"} {
		script := "#!/bin/sh\necho \"$0 $*\" >> " + record + "\nexit 1\n"
		if err := os.WriteFile(filepath.Join(shim, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, url := range []string{"file://" + filepath.Join(f.dir, "srv", "crashy.git"), filepath.Join(f.dir, "srv", "strict.git")} {
		cfg := `{"components": [{"module": "crashy$", "name": "crashy", "repo": "` + url + `", "revision": "v1.0"}]}`
		if err := os.WriteFile(filepath.Join(cwd, ConfigFileName), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		r := boundtest.Run(t, boundtest.Cmd{Args: []string{"sources", "--json", "--quiet", "--exe", f.exe, f.core}, Dir: cwd,
			Env: []string{"XDG_CACHE_HOME=" + xdg, "PATH=" + shim + ":" + os.Getenv("PATH")}, Limits: boundtest.Limits{Wall: 120 * time.Second}})
		if r.Killed != "" || r.Exit != 0 {
			t.Fatalf("%v\n%s", r, r.Stderr)
		}
		if b, err := os.ReadFile(record); err == nil {
			t.Fatalf("sources on %s ran a git subprocess:\n%s", url, b)
		}
		if strings.Contains(r.Stdout, "upload-pack") || !strings.Contains(r.Stdout, f.rev["v1.0"]) || !strings.Contains(r.Stdout, `"origin": "config"`) {
			t.Errorf("sources on %s did not resolve v1.0 (%s) from the config:\n%.3000s", url, f.rev["v1.0"], r.Stdout)
		}
	}
}
