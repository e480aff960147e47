package server_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/faultline-dev/faultline/gitsrc/gitsrctest"
	"github.com/faultline-dev/faultline/server"
)

// TestZlibLensAndHover (issue 22's zlib case in the editor): the zlib
// crash (CVE-2022-37434 in a libz.so.1.2.11 whose build prefix is gone),
// no faultline.json, zlib's history served by git daemon and reached
// through the user's url.insteadOf rule. The crash is shown in the
// checkout as soon as it is written; then the lens on inflate()'s first
// line says which upstream commits changed it — as many as git log -L
// lists, both fixes first — and the hover names both fixes with their
// messages; offline, the cache's develop branch gives the same lens.
func TestZlibLensAndHover(t *testing.T) {
	if testing.Short() {
		t.Skip("builds zlib and serves git")
	}
	z, err := gitsrctest.Zlib()
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := gitsrctest.StartDaemon(filepath.Join(z.Dir, "srv"))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	gitsrctest.UseMirror(t, url, "https://github.com/madler/")
	cache := t.TempDir()
	for _, offline := range []bool{false, true} {
		if offline {
			stop()
		}
		zlibLens(t, z, cache, offline)
	}
}

func zlibLens(t *testing.T, z *gitsrctest.LibCrash, cache string, offline bool) {
	t.Helper()
	e := newEnvIn(t, t.TempDir(), map[string]any{"cacheDir": cache, "offline": offline}, server.Options{})
	defer e.Shutdown()
	if err := e.Execute(server.CommandOpen, map[string]string{"dump": z.Core, "exe": z.Exe}, nil); err != nil {
		t.Fatal(err)
	}
	var res server.FetchSourcesResult
	if err := e.Execute(server.CommandFetchSources, map[string]any{}, &res); err != nil {
		t.Fatal(err)
	}
	var up *server.UpstreamSummary
	for i := range res.Upstream {
		if res.Upstream[i].Function == "inflate" {
			up = &res.Upstream[i]
		}
	}
	if up == nil {
		t.Fatalf("offline %v: no review of inflate(): %+v", offline, res)
	}
	// git log -L on the lines the review followed lists as many commits.
	src, err := uri.Parse(up.URI)
	if err != nil {
		t.Fatal(err)
	}
	lenses, err := e.Server.CodeLens(e.ctx, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: src}})
	if err != nil {
		t.Fatal(err)
	}
	var lens *protocol.CodeLens
	for i, l := range lenses {
		if strings.Contains(l.Command.Title, "inflate()") {
			lens = &lenses[i]
		}
	}
	decl := strings.Split(gitsrctest.MustRun(t, z.Work, "git", "show", "v1.2.11:inflate.c"), "\n")
	if lens == nil || !strings.HasPrefix(decl[lens.Range.Start.Line], "int ZEXPORT inflate(strm, flush)") {
		t.Fatalf("offline %v: no lens on inflate()'s first line: %+v", offline, lenses)
	}
	want := fmt.Sprintf("%d upstream commits since v1.2.11 changed inflate(): ", up.Touching)
	if up.Touching < 2 || !strings.HasPrefix(lens.Command.Title, want) ||
		!(strings.Contains(lens.Command.Title, "Fix extra field processing bug") || strings.Contains(lens.Command.Title, "Fix a bug when getting a gzip header extra field")) {
		t.Errorf("offline %v: lens %q; want %q and a fix first", offline, lens.Command.Title, want)
	}
	h, err := e.Server.Hover(e.ctx, &protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: src}, Position: protocol.Position{Line: lens.Range.Start.Line + 5}}})
	if err != nil {
		t.Fatal(err)
	}
	md := hoverText(h)
	for _, s := range []string{want, "Fix a bug when getting a gzip header extra field with inflate().",
		"Fix extra field processing bug that dereferences NULL state->head.", "(upstream commit eff308af425b67093bab25f80f1ae950166bece1)",
		"changes the function", "git log -L "} {
		if !strings.Contains(md, s) {
			t.Errorf("offline %v: hover lacks %q:\n%s", offline, s, md)
		}
	}
}
