package report_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/analysis/report"
	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// referenceJSON is what report.JSON must print: encoding/json's indented
// encoding of the whole model.
func referenceJSON(t testing.TB, c *model.Crash) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func streamedJSON(t testing.TB, c *model.Crash) []byte {
	var buf bytes.Buffer
	if err := report.JSON(&buf, c); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestJSONMatchesEncodingJSON holds the streamed encoder to encoding/json's
// bytes on every golden corpus core (real threads, inline frames, modules,
// problems) and on a model with every kind of awkward string and every
// optional field both set and empty.
func TestJSONMatchesEncodingJSON(t *testing.T) {
	var names []string
	for n := range goldenCases {
		names = append(names, n)
	}
	sort.Strings(names)
	frames := 0
	for _, name := range names {
		opt := analysis.Options{Exe: filepath.Join(corpus, "bin", name)}
		for _, d := range goldenCases[name] {
			opt.SearchDirs = append(opt.SearchDirs, filepath.Join(corpus, d))
		}
		c, err := analysis.Open(filepath.Join(corpus, "cores", name+".core.gz"), opt)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, th := range c.Threads {
			frames += len(th.Frames)
		}
		if got, want := streamedJSON(t, c), referenceJSON(t, c); !bytes.Equal(got, want) {
			t.Errorf("%s: streamed JSON differs from encoding/json:\n%s", name, firstDiff(string(got), string(want)))
		}
	}
	if frames < 100 {
		t.Fatalf("only %d frames in the corpus cores: the comparison proved little", frames)
	}
	c := awkwardCrash()
	if got, want := streamedJSON(t, c), referenceJSON(t, c); !bytes.Equal(got, want) {
		t.Errorf("awkward model: streamed JSON differs from encoding/json:\n%s", firstDiff(string(got), string(want)))
	}
	c.Threads = []model.Thread{}
	if got, want := streamedJSON(t, c), referenceJSON(t, c); !bytes.Equal(got, want) {
		t.Errorf("empty threads: streamed JSON differs:\n%s", firstDiff(string(got), string(want)))
	}
}

func awkwardCrash() *model.Crash {
	var all strings.Builder
	for b := 0; b < 256; b++ {
		all.WriteByte(byte(b))
	}
	odd := "a\u2028b\u2029c<&>\"\\\x7f é 中 \xff\xfe" + all.String()
	return &model.Crash{
		Schema: model.Schema,
		Dump:   model.Dump{Path: odd, Format: "elf-core"},
		Threads: []model.Thread{
			{ID: 1, Crashed: true, Name: odd, Truncated: odd, Frames: []model.Frame{
				{Index: 0, PC: "0x1", Module: odd, Function: odd, File: odd, Line: -3, Column: 7, Inlined: true,
					Trust: model.TrustCFI, Source: odd, Language: "python", Regs: map[string]uint64{"rip": 1}},
				{Index: 1, PC: ""},
			}},
			{ID: 2, Frames: nil},
			{ID: -5, Frames: []model.Frame{}},
		},
		Problems: []model.Problem{},
	}
}

// FuzzJSONString holds the string quoting to encoding/json's on any bytes.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "\x00\x1f\"\\", "\u2028\u2029", "\xff\xc3", "é中😀", "<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzbudget.Check(t, len(s), fuzzbudget.Default, func() {
			c := &model.Crash{Threads: []model.Thread{{Name: s, Frames: []model.Frame{{Function: s, PC: s}}}}}
			if got, want := streamedJSON(t, c), referenceJSON(t, c); !bytes.Equal(got, want) {
				t.Fatalf("%q: streamed JSON differs:\n%s", s, firstDiff(string(got), string(want)))
			}
		})
	})
}
