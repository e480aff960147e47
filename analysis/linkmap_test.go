package analysis_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/internal/testgz"
)

// hideNTFile rewrites a core in place so that its NT_FILE note has another
// type: the core then lists no mapped files, as qemu-user's cores and some
// container runtimes' do.
func hideNTFile(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	const ntFile = 0x46494c45
	hidden := false
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		for off := p.Off; off+12 <= p.Off+p.Filesz; {
			namesz := uint64(binary.LittleEndian.Uint32(data[off:]))
			descsz := uint64(binary.LittleEndian.Uint32(data[off+4:]))
			if binary.LittleEndian.Uint32(data[off+8:]) == ntFile {
				binary.LittleEndian.PutUint32(data[off+8:], ntFile+0x100)
				hidden = true
			}
			off += 12 + (namesz+3)&^3 + (descsz+3)&^3
		}
	}
	if !hidden {
		t.Fatal("the core has no NT_FILE note to hide")
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLinkMapWithoutNTFile: a real core with its NT_FILE note hidden yields
// the same modules (by build-id and load bias, found through r_debug's
// link_map, dlopen'ed plugins included) and the same crashing-thread frames
// as the untouched core.
func TestLinkMapWithoutNTFile(t *testing.T) {
	for _, c := range loadCorpus(t) {
		if c.Name != "dlopen_plugin" && c.Name != "uncaught_throw" {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			checkSystemLibs(t, c)
			bin, _ := filepath.Abs(filepath.Join(corpus, c.Binary))
			var dirs []string
			for _, d := range c.SearchDirs {
				a, _ := filepath.Abs(filepath.Join(corpus, d))
				dirs = append(dirs, a)
			}
			core := filepath.Join(t.TempDir(), c.Name+".core")
			testgz.Gunzip(t, filepath.Join(corpus, c.Core), core)
			opt := analysis.Options{Exe: bin, SearchDirs: dirs, Offline: true}
			want, err := analysis.Open(core, opt)
			if err != nil {
				t.Fatal(err)
			}
			hideNTFile(t, core)
			got, err := analysis.Open(core, opt)
			if err != nil {
				t.Fatal(err)
			}
			have := map[string]analysis.Module{}
			for _, m := range got.Modules {
				have[m.BuildID] = m
			}
			libs := 0
			for _, m := range want.Modules {
				if m.Path == "[vdso]" {
					continue
				}
				h, ok := have[m.BuildID]
				switch {
				case !ok:
					t.Errorf("%s (build-id %s) not found through link_map", m.Path, m.BuildID)
				case h.Bias != m.Bias:
					t.Errorf("%s: bias %#x through link_map, %#x from NT_FILE", m.Path, h.Bias, m.Bias)
				case h.Symbols != m.Symbols:
					t.Errorf("%s: symbols %s through link_map, %s from NT_FILE", m.Path, h.Symbols, m.Symbols)
				}
				if strings.Contains(m.Path, ".so") {
					libs++
				}
			}
			if libs < 2 {
				t.Errorf("only %d shared libraries in the reference core", libs)
			}
			var wf, gf []string
			for _, f := range want.Threads[0].Frames {
				wf = append(wf, f.Function+" "+f.File)
			}
			for _, f := range got.Threads[0].Frames {
				gf = append(gf, f.Function+" "+f.File)
			}
			if strings.Join(wf, "\n") != strings.Join(gf, "\n") {
				t.Errorf("frames differ without NT_FILE:\n%s\nwith it:\n%s", strings.Join(gf, "\n"), strings.Join(wf, "\n"))
			}
			found := false
			for _, p := range got.Problems {
				found = found || strings.Contains(p.Message, "link_map")
			}
			if !found {
				t.Errorf("no problem says the libraries came from link_map: %+v", got.Problems)
			}
		})
	}
}
