package gitsrc

import (
	"bytes"
	"strings"
)

// functionRange finds the lines [start, end] of the function that contains
// line in a C-family source file, from its name as the debugger prints it
// ("ns::Class::~Class", "value_of(int)", "Table<int>::row"): the nearest
// line at or above line naming the function's last component before a
// "(", then that definition's braces. It returns line, line when the
// source does not let it tell.
func functionRange(src []byte, line int, function string) (int, int) {
	lines := bytes.Split(src, []byte("\n"))
	if line < 1 || line > len(lines) {
		return line, line
	}
	name := shortFunctionName(function)
	if name == "" {
		return line, line
	}
	// Try each line naming the function, nearest first: a call or a
	// declaration fails the brace match and the search goes on upwards.
	tries := 0
	for start := line; start >= 1 && start > line-5000 && tries < 64; start-- {
		if !callsName(lines[start-1], name) {
			continue
		}
		tries++
		if end, ok := matchBraces(lines, start); ok && end >= line {
			return start, end
		}
	}
	return line, line
}

// matchBraces finds the line closing the first brace opened at or after
// line start, skipping strings and comments; ok is false when a ';' or
// '}' comes before any '{' (a declaration or a call, not a definition).
func matchBraces(lines [][]byte, start int) (int, bool) {
	depth, opened, inBlock := 0, false, false
	for i := start; i <= len(lines) && i < start+20000; i++ {
		l := lines[i-1]
		for j := 0; j < len(l); j++ {
			ch := l[j]
			if inBlock {
				if ch == '*' && j+1 < len(l) && l[j+1] == '/' {
					inBlock = false
					j++
				}
				continue
			}
			switch ch {
			case '/':
				if j+1 < len(l) && l[j+1] == '/' {
					j = len(l)
				} else if j+1 < len(l) && l[j+1] == '*' {
					inBlock = true
					j++
				}
			case '"', '\'':
				for j++; j < len(l) && l[j] != ch; j++ {
					if l[j] == '\\' {
						j++
					}
				}
			case ';':
				if !opened {
					return 0, false
				}
			case '{':
				depth++
				opened = true
			case '}':
				if !opened {
					return 0, false
				}
				depth--
				if depth == 0 {
					return i, true
				}
			}
		}
	}
	return 0, false
}

// shortFunctionName is the last component of a demangled or source-level
// function name, without parameters or template arguments.
func shortFunctionName(f string) string {
	if i := strings.IndexByte(f, '('); i >= 0 {
		f = f[:i]
	}
	// Drop template arguments, innermost first.
	for {
		i := strings.LastIndexByte(f, '<')
		if i < 0 {
			break
		}
		j := strings.IndexByte(f[i:], '>')
		if j < 0 {
			f = f[:i]
			break
		}
		f = f[:i] + f[i+j+1:]
	}
	if i := strings.LastIndex(f, "::"); i >= 0 {
		f = f[i+2:]
	}
	return strings.TrimSpace(f)
}

// callsName reports whether a line names name, as a whole identifier,
// followed by "(".
func callsName(l []byte, name string) bool {
	for off := 0; off < len(l); {
		i := bytes.Index(l[off:], []byte(name))
		if i < 0 {
			return false
		}
		i += off
		off = i + 1
		if i > 0 && isIdent(l[i-1]) && name[0] != '~' {
			continue
		}
		k := i + len(name)
		for k < len(l) && (l[k] == ' ' || l[k] == '\t') {
			k++
		}
		if k < len(l) && l[k] == '(' {
			return true
		}
	}
	return false
}

func isIdent(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}
