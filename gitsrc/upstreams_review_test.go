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

// TestRealReleaseReviews: two more upstreams built from Debian's
// releases and upstream fixes, with other tag conventions and default
// branches — expat (C, R_2_2_10, master, its library under expat/lib)
// and snappy (C++, 1.1.9, main; the crash in a namespaced function) —
// crashed in a library built -g -O2 under a removed build
// prefix, identified with no faultline.json and fetched through a
// url.insteadOf mirror rule: the review lists what git log lists for the
// crashing file, and as changing the crashing function what git log -L
// lists on the lines the binary gives it.
func TestRealReleaseReviews(t *testing.T) {
	for _, u := range []struct {
		name           string
		build          func() (*gitsrctest.LibCrash, error)
		mirror         string
		rev, branch    string
		path, function string
	}{
		{"expat", gitsrctest.Expat, "https://github.com/libexpat/", "R_2_2_10", "master", "expat/lib/xmlparse.c", "XML_Parse"},
		{"snappy", gitsrctest.Snappy, "https://github.com/google/", "1.1.9", "main", "snappy.cc", "snappy::internal::CompressFragment"},
	} {
		t.Run(u.name, func(t *testing.T) {
			lc, err := u.build()
			if err != nil {
				t.Fatal(err)
			}
			url, stop, err := gitsrctest.StartDaemon(filepath.Join(lc.Dir, "srv"))
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			gitsrctest.UseMirror(t, url, u.mirror)
			c, err := analysis.Open(lc.Core, analysis.Options{Exe: lc.Exe, Offline: true})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			res, err := Resolve(ctx, c, Options{CacheDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			var comp *Component
			for i := range res.Components {
				if res.Components[i].Name == u.name {
					comp = &res.Components[i]
				}
			}
			if comp == nil || comp.Revision != u.rev || comp.Origin == "config" {
				t.Fatalf("component %+v; problems %+v", comp, res.Problems)
			}
			rv := findReview(t, res, u.path)
			src := strings.Split(gitsrctest.MustRun(t, lc.Work, "git", "show", u.rev+":"+u.path), "\n")
			short := u.function[strings.LastIndex(u.function, ":")+1:]
			if rv.Extent != "binary" || rv.Function != u.function || rv.Branch != u.branch ||
				rv.Line < rv.FunctionStart || rv.Line > rv.FunctionEnd || rv.FunctionEnd > len(src) ||
				!strings.Contains(strings.Join(src[rv.FunctionStart-1:min(rv.FunctionStart+2, len(src))], " "), short+"(") ||
				strings.TrimSpace(src[rv.FunctionEnd-1]) != "}" {
				t.Fatalf("review %s of %s at line %d: lines %d-%d (%s extent) on %s", rv.Path, rv.Function, rv.Line,
					rv.FunctionStart, rv.FunctionEnd, rv.Extent, rv.Branch)
			}
			checkAgainstGit(t, lc.Work, rv, u.rev, u.branch)
		})
	}
}

// checkAgainstGit holds a review to git log and git log -L in work.
func checkAgainstGit(t *testing.T, work string, rv FileReview, rev, branch string) {
	t.Helper()
	args := []string{"log", "--format=%H", "-s"}
	for _, l := range rv.HeadLines {
		args = append(args, fmt.Sprintf("-L%d,%d:%s", l[0], l[1], rv.HeadPath))
	}
	wantFn := strings.Fields(gitsrctest.MustRun(t, work, "git", append(args, rev+".."+branch)...))
	wantFile := strings.Fields(gitsrctest.MustRun(t, work, "git", "log", "--format=%H", rev+".."+branch, "--", rv.Path))
	var fn, file []string
	for _, c := range rv.Commits {
		file = append(file, c.Commit)
		if c.TouchesFrame {
			fn = append(fn, c.Commit)
		}
	}
	// Some commit changed the function and some changed only the file, so
	// each list is a real filter.
	if len(wantFn) == 0 || len(wantFn) >= len(wantFile) || !sameSet(fn, wantFn) || !sameSet(file, wantFile) {
		t.Errorf("%s(): changed by %d commits, git log -L lists %d; %s by %d, git log %d", rv.Function,
			len(fn), len(wantFn), rv.Path, len(file), len(wantFile))
	}
	t.Logf("%s", rv.Summary(3))
}
