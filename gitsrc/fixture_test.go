package gitsrc

import (
	"context"
	"github.com/faultline-dev/faultline/internal/boundtest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/gitsrc/gitsrctest"
)

// The fixture (package gitsrctest, shared with the language server's
// tests): testdata/gitsrc/mkrepo.sh's repository served by a real `git
// http-backend` and a real `git daemon`, both on 127.0.0.1, and a crash
// program compiled from a checkout of its v1.0 tag with DWARF paths moved
// under a long fake build prefix and a .note.package naming the HTTP
// repository, with its core dump.

const buildPrefix = gitsrctest.BuildPrefix

type fixture struct {
	dir     string // everything below lives here
	work    string // working clone with the whole history
	httpURL string // http://127.0.0.1:PORT/ (crashy.git, strict.git)
	gitURL  string // git://127.0.0.1:PORT/
	exe     string // the crash program
	core    string // its core dump
	rev     map[string]string
	crash   *analysis.Crash

	shared *gitsrctest.Fixture
}

var (
	fixOnce sync.Once
	fix     *fixture
	fixErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fix != nil {
		fix.shared.Close()
	}
	boundtest.Cleanup()
	os.Exit(code)
}

func getFixture(t *testing.T) *fixture {
	t.Helper()
	fixOnce.Do(func() {
		var s *gitsrctest.Fixture
		if s, fixErr = gitsrctest.New(".."); fixErr == nil {
			fix = &fixture{dir: s.Dir, work: s.Work, httpURL: s.HTTPURL, gitURL: s.GitURL, exe: s.Exe, core: s.Core,
				rev: s.Rev, crash: s.Crash, shared: s}
		}
	})
	if fixErr != nil {
		t.Fatalf("fixture: %v", fixErr)
	}
	return fix
}

func run(dir string, name string, args ...string) (string, error) {
	return gitsrctest.Run(dir, name, args...)
}

// resolve runs Resolve on the fixture's crash with a fresh cache.
func (f *fixture) resolve(t *testing.T, opt Options) *Result {
	t.Helper()
	if opt.CacheDir == "" {
		opt.CacheDir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Resolve(ctx, f.crash, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
