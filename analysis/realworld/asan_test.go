package realworld_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/model"
)

// TestAddressSanitizer: clang links ASan's runtime into the executable,
// gcc links libasan.so (its runtime frames are in that module); an
// ASan abort is classified from the report functions on the stack, and
// from ASan's own report when its log is given, with the culprit the first
// program frame (never __sanitizer::Abort or __asan_report_load8).
func TestAddressSanitizer(t *testing.T) {
	for _, compiler := range []string{"clang", "gcc"} {
		t.Run(compiler, func(t *testing.T) { testAddressSanitizer(t, compiler) })
	}
}

func testAddressSanitizer(t *testing.T, compiler string) {
	bin := buildOnce(t, "asan-"+compiler, compiler, []string{"asan.c"}, "-fsanitize=address", "-O1", "-g")
	for _, tc := range []struct {
		mode, culprit, check, kind string
		withLog                    []string
	}{
		{"uaf", "request_size", "8-byte read", model.KindUseAfterFree, []string{"heap-use-after-free", "freed in main (asan.c:24)", "allocated in main (asan.c:22)"}},
		{"overflow", "fill_ids", "8-byte write", model.KindBufferOverflow, []string{"heap-buffer-overflow", "allocated in main (asan.c:27)"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			dir := t.TempDir()
			core, stderr := crashlab.Crash(t, dir, "export ASAN_OPTIONS=abort_on_error=1:disable_coredump=0", bin, tc.mode)
			log := filepath.Join(dir, "asan.log")
			if err := os.WriteFile(log, []byte(stderr), 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := analysis.Open(core, analysis.Options{Exe: bin})
			if err != nil {
				t.Fatal(err)
			}
			cls := c.Classification
			if cls.Kind != model.KindMemoryError || culprit(c) != tc.culprit || !strings.Contains(cls.Summary, tc.check) {
				t.Errorf("without the log: kind %s, culprit %q, summary %q; want %s, %s, %q", cls.Kind, culprit(c), cls.Summary,
					model.KindMemoryError, tc.culprit, tc.check)
			}
			if tc.mode == "uaf" {
				if d := crashlab.CompareWithGDB(crashlab.GDB(t, bin, core), c); d != "" {
					t.Errorf("frames differ from gdb:\n%s", d)
				}
			}
			c, err = analysis.Open(core, analysis.Options{Exe: bin, SanitizerLog: log})
			if err != nil {
				t.Fatal(err)
			}
			cls = c.Classification
			if cls.Kind != tc.kind || culprit(c) != tc.culprit {
				t.Errorf("with the log: kind %s, culprit %q; want %s, %s (summary %q)", cls.Kind, culprit(c), tc.kind, tc.culprit, cls.Summary)
			}
			for _, w := range append(tc.withLog, tc.check) {
				if !strings.Contains(cls.Summary, w) {
					t.Errorf("summary %q lacks %q", cls.Summary, w)
				}
			}
			if c.Sanitizer == nil || c.Sanitizer.Bug != tc.withLog[0] {
				t.Errorf("crash model's sanitizer section %+v", c.Sanitizer)
			}
			if strings.Contains(cls.Signature, "0x") || strings.Contains(cls.Signature, "__asan") || strings.Contains(cls.Signature, "__sanitizer") {
				t.Errorf("signature %q has runtime frames or addresses", cls.Signature)
			}
		})
	}
}
