package srcfunc

import (
	"os"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// lines splits a file into lines that keep their newlines.
func splitFile(s string) []string {
	l := strings.SplitAfter(s, "\n")
	if len(l) > 0 && l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

func TestFunctionRange(t *testing.T) {
	dtor, err := os.ReadFile("../../testdata/native/static_dtor.cpp")
	if err != nil {
		t.Fatal(err)
	}
	lines := splitFile(string(dtor))
	def := 0
	for i, l := range lines {
		if strings.HasPrefix(l, "Client::~Client()") {
			def = i + 1
		}
	}
	lo, hi, ok := Range(lines, def+2, "Client::~Client")
	if !ok || lo != def || hi <= def+1 || strings.TrimSpace(lines[hi-1]) != "}" {
		t.Errorf("~Client spans %d-%d (%v); definition at %d", lo, hi, ok, def)
	}
	src := splitFile("int f(int);\nint g(int x)\n{\n\treturn f(x); /* } */\n}\n\nint f(int x)\n{\n\tif (x) {\n\t\treturn g(x - 1);\n\t}\n\treturn 0;\n}\n")
	for _, tc := range []struct {
		line   int
		fn     string
		lo, hi int
	}{{4, "g", 2, 5}, {10, "f(int)", 7, 13}, {10, "unknown", 0, 0}, {4, "f", 0, 0}} {
		if lo, hi, _ := Range(src, tc.line, tc.fn); lo != tc.lo || hi != tc.hi {
			t.Errorf("Range(line %d, %s) = %d-%d, want %d-%d", tc.line, tc.fn, lo, hi, tc.lo, tc.hi)
		}
	}
	for in, want := range map[string]string{"ns::Table<int>::row(unsigned long)": "row", "Client::~Client": "~Client", "main": "main",
		"std::vector<std::pair<int, int> >::at": "at", "Matrix::operator()(int, int)": "operator"} {
		if got := ShortName(in); got != want {
			t.Errorf("ShortName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFunctionRangeShapes: definitions the source fallback must read —
// K&R (zlib's style until 1.3), C++ qualified names, templates,
// constructors with member initializers (braced ones too), qualifiers,
// macros — and calls and declarations it must not take for definitions.
func TestFunctionRangeShapes(t *testing.T) {
	for _, tc := range []struct {
		name, fn, src string
		line, lo, hi  int
	}{
		{"K&R", "inflate", "int ZEXPORT inflate(strm, flush)\nz_streamp strm;\nint flush;\n{\n    int ret = inflate_fast(strm);\n    return ret;\n}\n", 5, 1, 7},
		{"K&R after a call of it", "inflate", "local int f(void) {\n    ret = inflate(strm, flush);\n    return ret;\n}\n\nint ZEXPORT inflate(strm, flush)\nz_streamp strm;\nint flush;\n{\n    return 0;\n}\n", 10, 6, 11},
		{"call then block", "inflate", "int g(void)\n{\n    return inflate(strm, flush);\n    if (x) {\n        y();\n    }\n}\n", 5, 0, 0},
		{"qualified", "ns::Table<int>::row(unsigned long)", "template <typename T>\nT Table<T>::row(unsigned long i) const noexcept(true)\n{\n    return rows_[i];\n}\n", 4, 2, 5},
		{"constructor", "Engine::Engine(int)", "Engine::Engine(int n)\n    : a_(n), b_{n + 1},\n      c_(std::max(n, 2))\n{\n    start();\n}\n", 5, 1, 6},
		{"trailing return", "make", "auto make(int n) -> std::unique_ptr<Node>\n{\n    return std::make_unique<Node>(n);\n}\n", 3, 1, 4},
		{"macro attributes", "run", "static int ATTRIBUTE_HOT run(int x) __attribute__((noinline));\nstatic int ATTRIBUTE_HOT run(int x) __attribute__((noinline))\n{\n    return x;\n}\n", 4, 2, 5},
		{"operator", "Matrix::operator()(int, int)", "double &Matrix::operator()(int i, int j)\n{\n    return d_[i * n_ + j];\n}\n", 3, 1, 4},
		{"braces in strings and comments", "h", "void h(void) {\n    puts(\"}\"); /* } */ // }\n    x();\n}\n", 3, 1, 4},
	} {
		lo, hi, _ := Range(splitFile(tc.src), tc.line, tc.fn)
		if lo != tc.lo || hi != tc.hi {
			t.Errorf("%s: %s at line %d spans %d-%d, want %d-%d", tc.name, tc.fn, tc.line, lo, hi, tc.lo, tc.hi)
		}
	}
}

func FuzzFunctionRange(f *testing.F) {
	f.Fuzz(func(t *testing.T, src []byte, line int, fn string) {
		fuzzbudget.Check(t, len(src)+len(fn), fuzzbudget.Default, func() {
			lo, hi, _ := Range(splitFile(string(src)), line, fn)
			if lo > hi {
				t.Fatalf("range %d-%d", lo, hi)
			}
		})
	})
}
