package runtimemsg

import (
	"strings"

	"github.com/faultline-dev/faultline/internal/lazyregexp"
)

// cloneSuffix matches the suffixes GCC and LLVM give the copies of a
// function they specialise or split (symbol table names such as
// "__pthread_kill_implementation.constprop.0", "foo.isra.0.cold",
// "bar.llvm.1234"), at the end of a name.
var cloneSuffix = lazyregexp.New(`(\.(constprop|isra|part|cold|lto_priv|localalias|llvm|specialized|clone)(\.[0-9]+)*)+$`)

// BaseName is a function name without its parameter list, template
// arguments, clone suffix ("[clone .cold]", ".constprop.0") or "@plt".
func BaseName(fn string) string {
	fn = strings.TrimSpace(fn)
	if i := strings.Index(fn, " [clone"); i >= 0 {
		fn = fn[:i]
	}
	fn = strings.TrimSuffix(fn, "@plt")
	fn = cloneSuffix.ReplaceAllString(fn, "")
	// Drop the parameter list: the last top-level "(...)" (operator() keeps its own).
	if strings.HasSuffix(fn, ")") || strings.HasSuffix(fn, ") const") {
		depth := 0
		for i := len(fn) - 1; i >= 0; i-- {
			switch fn[i] {
			case ')':
				depth++
			case '(':
				depth--
				if depth == 0 {
					if !strings.HasSuffix(fn[:i], "operator()") && !strings.HasSuffix(fn[:i], "operator") {
						fn = fn[:i]
					}
					i = 0
				}
			}
		}
	}
	// Drop template arguments: a '<' right after a name. One that starts
	// a name part is Python's "<module>", "<lambda>", "<listcomp>".
	var b strings.Builder
	depth := 0
	for i := 0; i < len(fn); i++ {
		c := fn[i]
		switch {
		case c == '<' && (depth > 0 || i > 0 && isIdentByte(fn[i-1])) &&
			!strings.HasSuffix(fn[:i], "operator") && !strings.HasSuffix(fn[:i], "operator<"):
			depth++
		case c == '>' && depth > 0:
			depth--
		case depth == 0:
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
