package logs

import (
	"os"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// TestParseASan reads a report clang 14's AddressSanitizer printed here
// (testdata/asan, from analysis/realworld/testdata/programs/asan.c uaf).
func TestParseASan(t *testing.T) {
	f, err := os.Open("testdata/asan/heap-use-after-free.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ParseASan(f)
	if err != nil {
		t.Fatal(err)
	}
	if r.Tool != "AddressSanitizer" || r.PID != 380 || r.Bug != "heap-use-after-free" || r.Address != 0x602000000018 ||
		r.Access != "read" || r.Size != 8 {
		t.Errorf("header: %+v", r)
	}
	want := []ASanFrame{{PC: 0x55b279826f6e, Function: "request_size", File: "/src/asan.c", Line: 13, Column: 83},
		{PC: 0x55b279826f33, Function: "main", File: "/src/asan.c", Line: 25, Column: 15}}
	if len(r.Stack) != 5 || r.Stack[0] != want[0] || r.Stack[1] != want[1] {
		t.Errorf("stack %+v", r.Stack)
	}
	if s := r.Stack[4]; s.Function != "_start" || s.Module != "/src/asan" || s.File != "" {
		t.Errorf("module frame %+v", s)
	}
	if len(r.FreedBy) != 2 || r.FreedBy[0].Function != "free" || r.FreedBy[1].Line != 24 {
		t.Errorf("freed by %+v", r.FreedBy)
	}
	if len(r.AllocatedBy) != 2 || r.AllocatedBy[0].Function != "__interceptor_malloc" || r.AllocatedBy[1].Line != 22 {
		t.Errorf("allocated by %+v", r.AllocatedBy)
	}
	if !strings.HasPrefix(r.Summary, "AddressSanitizer: heap-use-after-free /src/asan.c:13:83") {
		t.Errorf("summary %q", r.Summary)
	}
	data, _ := os.ReadFile("testdata/asan/heap-use-after-free.log")
	if !IsASanReport(data[:300]) || IsASanReport([]byte("\x7fELF\x02\x01\x01")) || IsASanReport([]byte("ERROR: AddressSanitizer in prose\n")) {
		t.Error("IsASanReport misjudges a report's head, an ELF header or prose")
	}
	if _, err := ParseASan(strings.NewReader("no report here\n")); err != ErrNoASanReport {
		t.Errorf("plain text: %v", err)
	}
}

// FuzzParseASan: any input parses or is rejected without a panic, within
// the caps.
func FuzzParseASan(f *testing.F) {
	f.Add("==1==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000008 (pc 0x1 bp 0x2 sp 0x3 T0)\n    #0 0x1 in f a.c:1:2\nSUMMARY: AddressSanitizer: SEGV a.c:1:2 in f\n")
	f.Fuzz(func(t *testing.T, in string) {
		fuzzbudget.Check(t, len(in), fuzzbudget.Default, func() {
			r, err := ParseASan(strings.NewReader(in))
			if err != nil {
				return
			}
			if len(r.Stack) > maxASanFrames || len(r.FreedBy) > maxASanFrames || len(r.AllocatedBy) > maxASanFrames {
				t.Fatalf("%d/%d/%d frames", len(r.Stack), len(r.FreedBy), len(r.AllocatedBy))
			}
		})
	})
}
