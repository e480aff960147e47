package realworld_test

import (
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/model"
)

// TestTerminateReasons: each way a C++ program reaches std::terminate is
// named for what it is — an uncaught exception, a pure virtual call, an
// exception escaping a noexcept function, a joinable std::thread destroyed
// — with the culprit the program's frame, also in -static binaries whose
// runtime symbols carry suffixes (__pthread_kill_implementation.constprop.0,
// __verbose_terminate_handler() [clone .cold]).
func TestTerminateReasons(t *testing.T) {
	for _, tc := range []struct {
		mode, build, culprit string
		summary              []string
	}{
		{"thread-throw", "static", "(anonymous namespace)::load_shard", []string{"Uncaught C++ exception std::runtime_error", "shard file missing"}},
		{"noexcept", "static", "(anonymous namespace)::load_shard", []string{"noexcept", "std::runtime_error"}},
		{"joinable", "static", "(anonymous namespace)::spawn_and_forget", []string{"std::thread", "joinable"}},
		{"pure-virtual", "dynamic", "Task::Task", []string{"Pure virtual call"}},
	} {
		t.Run(tc.mode+"-"+tc.build, func(t *testing.T) {
			flags := []string{"-O2", "-g", "-pthread"}
			if tc.build == "static" {
				flags = append(flags, "-static")
			}
			bin := buildOnce(t, "terminate-"+tc.build, "g++", []string{"terminate.cpp"}, flags...)
			core, _ := crashlab.Crash(t, t.TempDir(), "", bin, tc.mode)
			c, err := analysis.Open(core, analysis.Options{Exe: bin})
			if err != nil {
				t.Fatal(err)
			}
			cls := c.Classification
			if cls.Kind != model.KindAbort {
				t.Errorf("kind %s, want %s", cls.Kind, model.KindAbort)
			}
			if got := culprit(c); got != tc.culprit {
				t.Errorf("culprit %q, want %q (summary %q)", got, tc.culprit, cls.Summary)
			}
			for _, w := range tc.summary {
				if !strings.Contains(cls.Summary, w) {
					t.Errorf("summary %q lacks %q", cls.Summary, w)
				}
			}
			if strings.Contains(cls.Signature, ".constprop") || strings.Contains(cls.Signature, "[clone") || strings.Contains(cls.Signature, "0x") {
				t.Errorf("signature %q keeps a clone suffix or an address", cls.Signature)
			}
			if d := crashlab.CompareWithGDB(crashlab.GDB(t, bin, core), c); d != "" {
				t.Errorf("frames differ from gdb:\n%s", d)
			}
		})
	}
}
