package rustdemangle

import (
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// FuzzDemangle: any name demangles or is left as it is, within the
// resource budget, the output bounded; verbose and plain agree on whether
// a name is a Rust one. Seeds: libiberty's vectors, and back-reference
// chains whose printed form doubles at each level.
func FuzzDemangle(f *testing.F) {
	for _, c := range libibertyVectors {
		f.Add(c.in)
	}
	f.Add("_ZN3std10sys_common9backtrace26__rust_end_short_backtrace17hc8542ca3b5dac53aE")
	f.Add(doublingBackrefs(30))
	f.Fuzz(func(t *testing.T, name string) {
		fuzzbudget.Check(t, len(name), fuzzbudget.Default, func() {
			plain, ok1 := Demangle(name, Options{})
			verbose, ok2 := Demangle(name, Options{Verbose: true})
			if ok1 != ok2 {
				t.Fatalf("%q: Rust name %v plain, %v verbose", name, ok1, ok2)
			}
			for _, s := range []string{plain, verbose} {
				if len(s) > maxOutput && s != name {
					t.Fatalf("%q: %d bytes of output", name, len(s))
				}
			}
		})
	})
}

// doublingBackrefs is a v0 name of n nested tuple types, each holding the
// previous one twice through a back-reference: its demangled form would be
// 2^n long, so it must stop at maxOutput.
func doublingBackrefs(n int) string {
	// _RINvC1a1fTuuE...E: each level "T" <prev> B<pos of prev> "E".
	var b strings.Builder
	b.WriteString("_RINvC1a1f")
	prev := len("INvC1a1f") // offset of the first type, after "_R"
	b.WriteString("u")
	for i := 0; i < n; i++ {
		start := b.Len() - 2
		b.WriteString("T")
		b.WriteString("B" + base62(uint64(prev)) + "B" + base62(uint64(prev)) + "E")
		prev = start
	}
	b.WriteString("E")
	return b.String()
}

// base62 encodes a back-reference position (<base-62-number>: i-1 in
// base 62, then "_"; 0 is "_").
func base62(i uint64) string {
	if i == 0 {
		return "_"
	}
	const digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	i--
	var out []byte
	for {
		out = append([]byte{digits[i%62]}, out...)
		i /= 62
		if i == 0 {
			break
		}
	}
	return string(out) + "_"
}

// TestBackrefExplosion: a name whose back-references double its printed
// form at every level is refused once the output passes maxOutput, fast.
func TestBackrefExplosion(t *testing.T) {
	for _, n := range []int{3, 40} {
		name := doublingBackrefs(n)
		fuzzbudget.Check(t, len(name), fuzzbudget.Default, func() {
			got, ok := Demangle(name, Options{})
			if n == 3 && (!ok || !strings.Contains(got, "((((), ()), ((), ())), (((), ()), ((), ())))")) {
				t.Errorf("3 levels: %q, %v", got, ok)
			}
			if n == 40 && ok {
				t.Errorf("40 levels demangled to %d bytes", len(got))
			}
		})
	}
}
