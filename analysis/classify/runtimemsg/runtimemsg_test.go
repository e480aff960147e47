package runtimemsg

import (
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis/model"
)

// fakeHost answers a Reader's questions as a classification in progress
// would, with a fixed place.
type fakeHost struct{ frames []model.Frame }

func (h fakeHost) Where() string   { return "main.f (main.go:7)" }
func (h fakeHost) CrashPoint() int { return -1 }
func (h fakeHost) HasFrame(set map[string]bool) (model.Frame, bool) {
	for _, f := range h.frames {
		if set[BaseName(f.Function)] {
			return f, true
		}
	}
	return model.Frame{}, false
}
func (h fakeHost) X86() bool                              { return true }
func (h fakeHost) ReadCString(uint64, int) (string, bool) { return "", false }
func (h fakeHost) ExitTime() bool                         { return false }

func reader(functions ...string) (*Reader, *model.Classification) {
	var frames []model.Frame
	for _, fn := range functions {
		frames = append(frames, model.Frame{Function: fn})
	}
	cls := &model.Classification{Kind: model.KindUnknown, CulpritFrame: -1}
	var noForeignNote bool
	return New(&model.Crash{}, nil, cls, frames, 0, &noForeignNote, fakeHost{frames}), cls
}

// TestGoPanicFromSigpanic: a nil dereference in Go code reaches the core
// as a fatal panic through runtime.sigpanic → runtime.panicmem.
func TestGoPanicFromSigpanic(t *testing.T) {
	r, cls := reader("runtime.raise", "runtime.crash", "runtime.fatalpanic", "runtime.gopanic",
		"runtime.panicmem", "runtime.sigpanic", "main.f", "main.main")
	if !r.GoPanic() {
		t.Fatal("GoPanic: false for a stack through runtime.fatalpanic")
	}
	if cls.Kind != model.KindNullDeref {
		t.Errorf("kind %q, want %q", cls.Kind, model.KindNullDeref)
	}
	if want := "Go panic: invalid memory address or nil pointer dereference in main.f (main.go:7)"; !strings.HasPrefix(cls.Summary, want) {
		t.Errorf("summary %q, want it to start %q", cls.Summary, want)
	}
	if len(cls.Evidence) == 0 {
		t.Error("no evidence")
	}
	if r, _ := reader("abort", "main.main"); r.GoPanic() {
		t.Error("GoPanic: true for a plain abort")
	}
}

// TestUBSanTrapID decodes clang's `ud1 ID(%eax),%eax` traps.
func TestUBSanTrapID(t *testing.T) {
	cases := []struct {
		code   []byte
		id     int
		isTrap bool
	}{
		{[]byte{0x67, 0x0f, 0xb9, 0x40, 0x02}, 2, true},           // ud1 0x2(%eax),%eax: cfi_check_fail
		{[]byte{0x0f, 0xb9, 0x00}, 0, true},                       // ud1 (%eax),%eax
		{[]byte{0x67, 0x0f, 0xb9, 0x80, 0x18, 0, 0, 0}, 24, true}, // a 32-bit displacement
		{[]byte{0x0f, 0x0b}, 0, false},                            // ud2
		{[]byte{0x0f, 0xb9, 0x41, 0x02}, 0, false},                // ud1 0x2(%ecx),%eax
		{[]byte{0x67, 0x0f, 0xb9, 0x40}, 0, false},                // cut short
	}
	for _, c := range cases {
		id, ok := ubsanTrapID(c.code)
		if ok != c.isTrap || id != c.id {
			t.Errorf("ubsanTrapID(% x) = %d, %v; want %d, %v", c.code, id, ok, c.id, c.isTrap)
		}
	}
}

// TestBaseName drops parameter lists, template arguments and clone
// suffixes, and keeps operator names and Python's <module>.
func TestBaseName(t *testing.T) {
	for in, want := range map[string]string{
		"std::vector<int, std::allocator<int> >::operator[](unsigned long) const": "std::vector::operator[]",
		"__pthread_kill_implementation.constprop.0":                               "__pthread_kill_implementation",
		"foo.isra.0.cold":            "foo",
		"bar [clone .cold]":          "bar",
		"memcpy@plt":                 "memcpy",
		"<module>":                   "<module>",
		"std::less<int>::operator()": "std::less::operator()",
	} {
		if got := BaseName(in); got != want {
			t.Errorf("BaseName(%q) = %q, want %q", in, got, want)
		}
	}
}
