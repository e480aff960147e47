package gitsrc

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/gitsrc/gitsrctest"
)

// zlibReviewed runs Resolve on the zlib crash with no configuration: the
// component comes from libz.so.1.2.11 and the registry's
// https://github.com/madler/zlib, reached through a url.insteadOf rule of
// the user's git configuration that names the test's git daemon.
func zlibReviewed(t *testing.T, z *gitsrctest.LibCrash, url, cache string, offline bool) *Result {
	t.Helper()
	gitsrctest.UseMirror(t, url, "https://github.com/madler/")
	c, err := analysis.Open(z.Core, analysis.Options{Exe: z.Exe, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := Resolve(ctx, c, Options{CacheDir: cache, Offline: offline})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestZlibCVE202237434 (issue 22's zlib case, end to end): zlib's history
// built from Debian's releases and upstream fixes, libz.so.1.2.11 built -g
// -O2 under a build prefix since removed, crashed in inflate() as
// CVE-2022-37434 crashes. With no configuration the review finds zlib at
// v1.2.11, takes inflate()'s extent from the binary (a K&R definition),
// and lists as changing it exactly what git log -L lists, both fixes
// first; the file's commits are git log's; offline, the cache's develop
// branch gives the same answer.
func TestZlibCVE202237434(t *testing.T) {
	z, err := gitsrctest.Zlib()
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := gitsrctest.StartDaemon(filepath.Join(z.Dir, "srv"))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	cache := t.TempDir()
	online := zlibReviewed(t, z, url, cache, false)
	checkZlibReview(t, z, online, "online")
	stop()
	offline := zlibReviewed(t, z, url, cache, true)
	checkZlibReview(t, z, offline, "offline")
}

func checkZlibReview(t *testing.T, z *gitsrctest.LibCrash, res *Result, how string) {
	t.Helper()
	var comp *Component
	for i := range res.Components {
		if res.Components[i].Name == "zlib" {
			comp = &res.Components[i]
		}
	}
	if comp == nil || comp.Revision != "v1.2.11" || comp.Origin == "config" || comp.Branch != "develop" {
		t.Fatalf("%s: zlib component %+v; problems %+v", how, comp, res.Problems)
	}
	rv := findReview(t, res, "inflate.c")
	src := strings.Split(gitsrctest.MustRun(t, z.Work, "git", "show", "v1.2.11:inflate.c"), "\n")
	if rv.Extent != "binary" || rv.Function != "inflate" || !strings.HasPrefix(src[rv.FunctionStart-1], "int ZEXPORT inflate(strm, flush)") ||
		strings.TrimSpace(src[rv.FunctionEnd-1]) != "}" || rv.Branch != "develop" {
		t.Fatalf("%s: inflate() reviewed over lines %d-%d (%s extent) on %s: %q … %q", how, rv.FunctionStart, rv.FunctionEnd,
			rv.Extent, rv.Branch, src[max(rv.FunctionStart-1, 0)], src[max(rv.FunctionEnd-1, 0)])
	}
	args := []string{"log", "--format=%H", "-s"}
	for _, l := range rv.HeadLines {
		args = append(args, fmt.Sprintf("-L%d,%d:%s", l[0], l[1], rv.HeadPath))
	}
	wantFn := strings.Fields(gitsrctest.MustRun(t, z.Work, "git", append(args, "v1.2.11..develop")...))
	wantFile := strings.Fields(gitsrctest.MustRun(t, z.Work, "git", "log", "--format=%H", "v1.2.11..develop", "--", "inflate.c"))
	var fn, file []string
	for _, c := range rv.Commits {
		file = append(file, c.Commit)
		if c.TouchesFrame {
			fn = append(fn, c.Commit)
		}
	}
	if !sameSet(fn, wantFn) || !sameSet(file, wantFile) {
		t.Errorf("%s: inflate() changed by %d commits, git log -L lists %d; inflate.c by %d, git log %d", how,
			len(fn), len(wantFn), len(file), len(wantFile))
	}
	// Both fixes, quoted from upstream, come first.
	fixes := map[string]bool{}
	for _, c := range rv.Commits[:min(2, len(rv.Commits))] {
		for _, h := range []string{"eff308af425b67093bab25f80f1ae950166bece1", "1eb7682f845ac9e9bf9ae35bbfb3bad5dacbd91d"} {
			if c.TouchesFrame && strings.Contains(c.Message, "(upstream commit "+h+")") {
				fixes[h] = true
			}
		}
	}
	if len(fixes) != 2 {
		t.Errorf("%s: the first two commits are not both fixes: %+v", how, rv.Commits)
	}
	sum := rv.Summary(3)
	want := fmt.Sprintf("%d upstream commits since v1.2.11 changed inflate(): ", len(wantFn))
	if !strings.HasPrefix(sum, want) || !strings.Contains(sum, "Fix a bug when getting a gzip header extra field") ||
		!strings.Contains(sum, "Fix extra field processing bug that dereferences NULL state->head") {
		t.Errorf("%s: summary %q; want it to start %q and name both fixes", how, sum, want)
	}
}
