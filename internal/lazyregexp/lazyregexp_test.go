package lazyregexp

import (
	"regexp"
	"testing"
)

// TestCompiledOnFirstUse: New compiles nothing (a pattern that does not
// compile panics only when used), and a used pattern answers as
// regexp.MustCompile's.
func TestCompiledOnFirstUse(t *testing.T) {
	bad := New(`(`)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a pattern that does not compile did not panic on first use")
			}
		}()
		bad.MatchString("x")
	}()
	const expr, text = `(\w+)=(\d+)`, "a=1 b=22 c=x"
	lazy, re := New(expr), regexp.MustCompile(expr)
	if got, want := lazy.FindAllStringSubmatch(text, -1), re.FindAllStringSubmatch(text, -1); len(got) != len(want) || got[1][2] != want[1][2] {
		t.Errorf("FindAllStringSubmatch = %q, want %q", got, want)
	}
	if got, want := lazy.ReplaceAllString(text, "$2"), re.ReplaceAllString(text, "$2"); got != want {
		t.Errorf("ReplaceAllString = %q, want %q", got, want)
	}
}
