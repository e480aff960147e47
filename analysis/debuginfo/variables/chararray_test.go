package variables

import "testing"

// TestCharArrayText: char arrays print as gdb prints them (print elements
// 200, print repeats 10, print null-stop off); the expected strings are
// gdb 13's output for the same arrays.
func TestCharArrayText(t *testing.T) {
	pad := func(s string, n int) []byte {
		b := make([]byte, n)
		copy(b, s)
		return b
	}
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'a' + byte(i%26)
	}
	for _, c := range []struct {
		b    []byte
		n    int64
		want string
	}{
		{[]byte("buffer_append\x00"), 14, `"buffer_append"`},
		{pad("abc", 16), 16, `"abc", '\000' <repeats 12 times>`},
		{pad("abc", 8), 8, `"abc\000\000\000\000"`},
		{[]byte("abcd"), 4, `"abcd"`},
		{pad("", 4), 4, `"\000\000\000"`},
		{[]byte("x\ty\"z\x01"), 6, `"x\ty\"z\001"`},
		{append(pad("ab", 2), []byte("ccccccccccccd\x00")...), 16, `"ab", 'c' <repeats 12 times>, "d"`},
		{long, 300, `"` + string(long[:200]) + `"...`},
		{[]byte{0}, 1, `""`},
		{make([]byte, 300), 300, `'\000' <repeats 299 times>`},
	} {
		if got := charArrayText(c.b, c.n); got != c.want {
			t.Errorf("%q: got %s, want %s", c.b, got, c.want)
		}
	}
}
