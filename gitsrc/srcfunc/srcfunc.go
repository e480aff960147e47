// Package srcfunc finds a function's definition in C-family source text,
// for when a binary does not say where a function starts and ends: K&R
// definitions, C++ qualified names, templates, constructors with member
// initializers, qualifiers, operators and macros around the declarator.
package srcfunc

import (
	"strings"
)

// The function's extent from its source, for when the binary does not give
// it (no DW_AT_decl_line, a frame without DWARF): the definition nearest
// at or above the frame's line that names the function's last component
// before "(", from that line to the brace closing its body. A definition
// is told from a call or a declaration by what follows the parameter
// list: a body, possibly after K&R parameter declarations
// (`int ZEXPORT inflate(strm, flush) z_streamp strm; int flush; {`), C++
// qualifiers (const, noexcept(…), override, -> T, attributes, macros) or a
// constructor's member initializers.

// Bounds of the search, so that a hostile or huge file costs little.
const (
	maxDefinitionScan  = 5000  // lines above the frame's line searched
	maxDefinitionTries = 64    // lines naming the function tried
	maxBodyLines       = 20000 // lines a body may span
)

// Range finds the lines [start, end] (1-based) of the definition
// of function containing line in src (lines with their newlines).
func Range(src []string, line int, function string) (int, int, bool) {
	if line < 1 || line > len(src) {
		return 0, 0, false
	}
	name := ShortName(function)
	if name == "" {
		return 0, 0, false
	}
	tries := 0
	for start := line; start >= 1 && start > line-maxDefinitionScan && tries < maxDefinitionTries; start-- {
		at, col := NamedCall(src[start-1], name)
		if col < 0 || !DeclaratorPrefix(src[start-1][:at]) {
			continue
		}
		tries++
		if end, ok := definitionEnd(src, start, col); ok && end >= line {
			return start, end, true
		}
	}
	return 0, 0, false
}

// definitionEnd reads a definition whose parameter list opens at column
// col of line start: the parameter list, what may stand between it and
// the body, and the body; it returns the line of the body's closing brace.
func definitionEnd(src []string, start, col int) (int, bool) {
	s := &srcScanner{src: src, line: start - 1, col: col, limit: start - 1 + maxBodyLines}
	params, ok := s.group('(', ')')
	if !ok {
		return 0, false
	}
	kr := isKRParams(params)
	declared := map[string]bool{}
	for n := 0; ; n++ {
		tok := s.next()
		declared[tok] = true
		switch {
		case tok == "{" && kr && !krDeclared(params, declared):
			return 0, false
		case tok == "{":
			s.col--
			if _, ok := s.group('{', '}'); !ok {
				return 0, false
			}
			return s.line + 1, true
		case tok == "(" || tok == "[":
			// noexcept(…), throw(…), __attribute__((…)), [[…]], a macro's arguments
			s.col--
			closer := byte(')')
			if tok == "[" {
				closer = ']'
			}
			if _, ok := s.group(tok[0], closer); !ok {
				return 0, false
			}
		case tok == ":":
			return s.initializers()
		case tok == ";":
			if !kr || n == 0 {
				return 0, false // a declaration
			}
		case kr && isStatementKeyword(tok):
			return 0, false // a call followed by more statements
		case tok == "" || tok == "}" || tok == "=" || tok == ")" || tok == "]" || tok == ",":
			return 0, false // a call, a declaration, or the end of the file
		}
	}
}

// initializers reads a constructor's member initializers (`: a(x), b{y}`)
// up to the body, and the body.
func (s *srcScanner) initializers() (int, bool) {
	for {
		tok := s.next()
		switch tok {
		case "(", "{":
			s.col--
			closer := byte(')')
			if tok == "{" {
				closer = '}'
			}
			if _, ok := s.group(tok[0], closer); !ok {
				return 0, false
			}
			// After an initializer: a comma, or the body.
			switch s.next() {
			case ",":
			case "{":
				s.col--
				if _, ok := s.group('{', '}'); !ok {
					return 0, false
				}
				return s.line + 1, true
			default:
				return 0, false
			}
		case "", ";", "}", ")":
			return 0, false
		}
	}
}

// krDeclared reports whether K&R parameter declarations seen before the
// body declare every parameter (or there are none: C89's implicit int).
func krDeclared(params string, declared map[string]bool) bool {
	if len(declared) == 1 { // only the "{"
		return true
	}
	for _, p := range strings.Split(params, ",") {
		if p = strings.TrimSpace(p); p != "" && !declared[p] {
			return false
		}
	}
	return true
}

func isStatementKeyword(tok string) bool {
	switch tok {
	case "return", "if", "else", "while", "for", "switch", "case", "do", "goto", "break", "continue":
		return true
	}
	return false
}

// isKRParams reports whether a parameter list is K&R's: empty, or only
// identifiers separated by commas.
func isKRParams(params string) bool {
	for _, p := range strings.Split(params, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		for i := 0; i < len(p); i++ {
			if !isIdent(p[i]) {
				return false
			}
		}
	}
	return true
}

// srcScanner reads C-family tokens across lines, skipping comments,
// string and character literals, and preprocessor lines.
type srcScanner struct {
	src       []string
	line, col int // 0-based position of the next byte
	limit     int // last line it may read
	inComment bool
}

// peek returns the next byte that is not in a comment or blank, and moves
// to it; 0 at the end.
func (s *srcScanner) peek() byte {
	for s.line < len(s.src) && s.line <= s.limit {
		l := s.src[s.line]
		if s.col == 0 && !s.inComment && strings.HasPrefix(strings.TrimSpace(l), "#") {
			s.line++
			continue
		}
		for s.col < len(l) {
			c := l[s.col]
			switch {
			case s.inComment:
				if c == '*' && s.col+1 < len(l) && l[s.col+1] == '/' {
					s.inComment = false
					s.col++
				}
			case c == '/' && s.col+1 < len(l) && l[s.col+1] == '/':
				s.col = len(l)
				continue
			case c == '/' && s.col+1 < len(l) && l[s.col+1] == '*':
				s.inComment = true
				s.col++
			case c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v':
				return c
			}
			s.col++
		}
		s.line++
		s.col = 0
	}
	return 0
}

// next returns the next token: an identifier or number, a literal (as
// `"`), "->", "::", or one punctuation byte; "" at the end.
func (s *srcScanner) next() string {
	c := s.peek()
	if c == 0 {
		return ""
	}
	l := s.src[s.line]
	start := s.col
	s.col++
	switch {
	case isIdent(c):
		for s.col < len(l) && isIdent(l[s.col]) {
			s.col++
		}
		return l[start:s.col]
	case c == '"' || c == '\'':
		for s.col < len(l) && l[s.col] != c {
			if l[s.col] == '\\' {
				s.col++
			}
			s.col++
		}
		s.col++
		return `"`
	case (c == '-' && s.col < len(l) && l[s.col] == '>') || (c == ':' && s.col < len(l) && l[s.col] == ':'):
		s.col++
		return l[start:s.col]
	}
	return string(c)
}

// group reads a bracketed group opening at the next token (which must be
// open) to its matching close, and returns its inside (for parentheses on
// one line or several, joined).
func (s *srcScanner) group(open, close byte) (string, bool) {
	if s.next() != string(open) {
		return "", false
	}
	var inside strings.Builder
	depth := 1
	for {
		tok := s.next()
		switch tok {
		case "":
			return "", false
		case string(open):
			depth++
		case string(close):
			depth--
			if depth == 0 {
				return inside.String(), true
			}
		}
		if open == '(' && inside.Len() < 4096 {
			inside.WriteString(tok)
			inside.WriteByte(' ')
		}
	}
}

// ShortName is the last component of a demangled or source-level
// function name, without parameters or template arguments.
func ShortName(f string) string {
	if i := strings.Index(f, "operator"); i >= 0 && (i == 0 || !isIdent(f[i-1])) {
		if j := i + len("operator"); j < len(f) && !isIdent(f[j]) {
			return "operator"
		}
	}
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

// NamedCall returns the columns of name, as a whole identifier, and of
// the "(" that follows it in line l; -1, -1 if none. For "operator" the
// "(" is the one after the operator's symbol.
func NamedCall(l, name string) (int, int) {
	for off := 0; off < len(l); {
		i := strings.Index(l[off:], name)
		if i < 0 {
			return -1, -1
		}
		i += off
		off = i + 1
		if i > 0 && isIdent(l[i-1]) && name[0] != '~' {
			continue
		}
		k := i + len(name)
		if k < len(l) && isIdent(l[k]) {
			continue
		}
		if name == "operator" {
			for k < len(l) && l[k] != '(' {
				k++
			}
			if k+1 < len(l) && l[k+1] == ')' { // operator()(…)
				k += 2
			}
		}
		for k < len(l) && (l[k] == ' ' || l[k] == '\t') {
			k++
		}
		if k < len(l) && l[k] == '(' {
			return i, k
		}
	}
	return -1, -1
}

// DeclaratorPrefix reports whether what precedes a function's name on its
// line can begin a definition: a return type, qualifiers, macros, a class
// scope — not an assignment, a condition or a statement keyword.
func DeclaratorPrefix(p string) bool {
	for i := 0; i < len(p); i++ {
		if c := p[i]; !isIdent(c) && !strings.ContainsRune(" \t*&:<>,~", rune(c)) {
			return false
		}
	}
	first, _, _ := strings.Cut(strings.TrimSpace(p), " ")
	switch first {
	case "return", "if", "else", "while", "for", "switch", "case", "do", "goto", "throw", "sizeof", "new", "delete", "co_return", "co_await":
		return false
	}
	return true
}

func isIdent(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}
