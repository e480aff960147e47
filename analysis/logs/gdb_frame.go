package logs

import (
	"strconv"
	"strings"
)

// gdb prints a frame (gdb/stack.c print_frame) as
//
//	#LEVEL  [0xPC in ]FUNCTION (ARGS)[ at FILE:LINE | from LIBRARY]
//	#LEVEL  <signal handler called>
//
// The pc is left out for inlined levels and when it is the first address of
// a line. FUNCTION may hold parentheses and spaces of its own
// ("(anonymous namespace)::f", "operator()", "std::terminate()",
// "foo<int (*)(int)>"), and ARGS may hold parentheses, quotes and " at "
// ("<error reading variable: Cannot access memory at address 0x10>").

// splitFrameIndex splits "#12 rest" into 12 and "rest".
func splitFrameIndex(s string) (int, string, bool) {
	if !strings.HasPrefix(s, "#") {
		return 0, "", false
	}
	n := 1
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if n == 1 || n > 10 || n == len(s) || (s[n] != ' ' && s[n] != '\t') {
		return 0, "", false
	}
	idx, err := strconv.Atoi(s[1:n])
	if err != nil {
		return 0, "", false
	}
	rest := strings.TrimLeft(s[n:], " \t")
	if rest == "" {
		return 0, "", false
	}
	return idx, rest, true
}

// parseFrameLine parses one frame line (continuation lines already joined).
func parseFrameLine(s string) (GDBFrame, bool) {
	idx, rest, ok := splitFrameIndex(s)
	if !ok {
		return GDBFrame{}, false
	}
	f := GDBFrame{Index: idx}
	rest = strings.TrimRight(rest, " \t")
	if pc, after, ok := cutPC(rest); ok {
		f.PC, f.HasPC = pc, true
		rest = after
	}
	if strings.HasPrefix(rest, SignalHandlerCalled) {
		f.Function = SignalHandlerCalled
		f.Signal = true
		return f, true
	}
	open, close := argList(rest)
	tail := ""
	if open >= 0 {
		f.Function = rest[:open-1]
		f.Args = rest[open+1 : close]
		tail = rest[close+1:]
	} else {
		// No argument list that ends the name: take what is before a
		// location suffix, if any, as the name.
		f.Function = rest
		if i := strings.LastIndex(rest, " at "); i >= 0 {
			f.Function, tail = rest[:i], rest[i:]
		} else if i := strings.LastIndex(rest, " from "); i >= 0 {
			f.Function, tail = rest[:i], rest[i:]
		}
	}
	switch {
	case strings.HasPrefix(tail, " at "):
		f.File, f.Line = splitFileLine(tail[len(" at "):])
	case strings.HasPrefix(tail, " from "):
		f.Library = tail[len(" from "):]
	}
	return f, true
}

// cutPC reads "0x00007f... in " at the start of s.
func cutPC(s string) (uint64, string, bool) {
	if !strings.HasPrefix(s, "0x") {
		return 0, s, false
	}
	n := 2
	for n < len(s) && isHex(s[n]) {
		n++
	}
	if n == 2 || n > 2+16 {
		return 0, s, false
	}
	pc, err := strconv.ParseUint(s[2:n], 16, 64)
	if err != nil {
		return 0, s, false
	}
	rest := s[n:]
	switch {
	case strings.HasPrefix(rest, " in "):
		return pc, rest[len(" in "):], true
	case rest == "":
		return pc, "", true
	}
	return 0, s, false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// splitFileLine splits "dir/f.c:12" at its last colon.
func splitFileLine(s string) (string, int) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, 0
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil || n < 0 {
		return s, 0
	}
	return s[:i], n
}

// argList finds the argument list of a frame's "FUNCTION (ARGS)[ at ...|
// from ...]": the first " (" whose matching ")" ends the text or is followed
// by " at " or " from ". It returns the indexes of both parentheses, or -1.
func argList(s string) (open, close int) {
	match := matchParens(s)
	for i := 1; i < len(s); i++ {
		if s[i] != '(' || s[i-1] != ' ' || match[i] < 0 {
			continue
		}
		j := match[i]
		tail := s[j+1:]
		if tail == "" || strings.HasPrefix(tail, " at ") || strings.HasPrefix(tail, " from ") {
			return i, j
		}
	}
	return -1, -1
}

// matchParens maps each '(' of s to its matching ')' (or -1), skipping
// parentheses inside "..." and '...' literals as gdb prints them, with
// backslash escapes. It runs in one pass, so long garbage lines stay cheap.
func matchParens(s string) []int {
	match := make([]int, len(s))
	var stack []int
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		match[i] = -1
		c := s[i]
		if quote != 0 {
			switch c {
			case '\\':
				if i+1 < len(s) {
					i++
					match[i] = -1
				}
			case quote:
				quote = 0
			}
			continue
		}
		switch c {
		case '"':
			quote = c
		case '\'':
			// A quote only opens a char literal in an argument value
			// ("c=40 '('"), after '=' or a space, never inside a name.
			if i > 0 && (s[i-1] == ' ' || s[i-1] == '=') {
				quote = c
			}
		case '(':
			stack = append(stack, i)
		case ')':
			if n := len(stack); n > 0 {
				match[stack[n-1]] = i
				stack = stack[:n-1]
			}
		}
	}
	return match
}

// parenScan tracks how many '(' are open in text fed to it piece by piece,
// outside "..." and '...' literals, so a wrapped frame's continuation lines
// are scanned once each.
type parenScan struct {
	depth  int
	quote  byte
	escape bool
	prev   byte
}

func (p *parenScan) feed(s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		prev := p.prev
		p.prev = c
		if p.quote != 0 {
			switch {
			case p.escape:
				p.escape = false
			case c == '\\':
				p.escape = true
			case c == p.quote:
				p.quote = 0
			}
			continue
		}
		switch c {
		case '"':
			p.quote = c
		case '\'':
			if prev == ' ' || prev == '=' {
				p.quote = c
			}
		case '(':
			p.depth++
		case ')':
			if p.depth > 0 {
				p.depth--
			}
		}
	}
}
