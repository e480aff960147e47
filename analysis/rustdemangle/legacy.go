package rustdemangle

import "strings"

// legacy demangles a legacy Rust name: "_ZN" then length-prefixed
// identifiers, the last of them the hash "h" + 16 hex digits, then "E"
// (libiberty's rust_demangle_callback, version -1). Unlike the Itanium
// scheme's v0 cousin, no "_" separates a length from its identifier: a
// name's own leading underscores are kept (__rust_end_short_backtrace).
func legacy(sym string, o Options) (string, bool) {
	body := sym[3:]
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !isAlnum(c) && c != '_' && c != '$' && c != '.' && c != ':' && c != '@' {
			return sym, false
		}
	}
	body, ok := trimLegacySuffix(body)
	if !ok || len(body) <= 19 || body[len(body)-19:len(body)-16] != "17h" {
		return sym, false
	}
	var idents []string
	for rest := body; rest != ""; {
		id, after, ok := legacyIdent(rest)
		if !ok {
			return sym, false
		}
		idents, rest = append(idents, id), after
	}
	if !isLegacyHash(idents[len(idents)-1]) {
		return sym, false
	}
	if !o.Verbose {
		idents = idents[:len(idents)-1]
	}
	var w output
	for i, id := range idents {
		if i > 0 {
			w.str("::")
		}
		printLegacyIdent(&w, id)
	}
	if w.overflow {
		return sym, false
	}
	return w.b.String(), true
}

// trimLegacySuffix drops what follows the closing "E" (".llvm.…",
// "@@16"): the name ends at the last "E" followed by a dot, or at a
// final "E".
func trimLegacySuffix(body string) (string, bool) {
	dotAfter := true
	for len(body) > 0 && !(dotAfter && body[len(body)-1] == 'E') {
		dotAfter = body[len(body)-1] == '.'
		body = body[:len(body)-1]
	}
	if body == "" {
		return "", false
	}
	return body[:len(body)-1], true
}

// legacyIdent reads one decimal length and that many bytes.
func legacyIdent(s string) (id, rest string, ok bool) {
	n, i := 0, 0
	for i < len(s) && isDigit(s[i]) {
		if n > len(s) {
			return "", "", false
		}
		n = n*10 + int(s[i]-'0')
		i++
		if n == 0 {
			break // a leading 0 is the whole number
		}
	}
	if i == 0 || n == 0 || n > len(s)-i {
		return "", "", false
	}
	return s[i : i+n], s[i+n:], true
}

// isLegacyHash: "h" and 16 lowercase hex digits, at least 5 different.
func isLegacyHash(id string) bool {
	if len(id) != 17 || id[0] != 'h' {
		return false
	}
	var seen uint16
	for i := 1; i < 17; i++ {
		v, ok := hexNibble(id[i])
		if !ok {
			return false
		}
		seen |= 1 << v
	}
	n := 0
	for ; seen != 0; seen &= seen - 1 {
		n++
	}
	return n >= 5
}

// printLegacyIdent writes an identifier with its escapes decoded: "$LT$"
// and the like, "$u7b$" (a hex character), ".." for "::".
// An underscore the mangler put before an escape to start the identifier
// with a letter is dropped; no other.
func printLegacyIdent(w *output, id string) {
	if strings.HasPrefix(id, "_$") {
		id = id[1:]
	}
	for id != "" {
		switch {
		case id[0] == '$':
			c, n := legacyEscape(id)
			if n == 0 {
				w.str(id) // not an escape: the rest as it is
				return
			}
			w.byte(c)
			id = id[n:]
		case strings.HasPrefix(id, ".."):
			w.str("::")
			id = id[2:]
		default:
			// Up to the next escape or "..".
			n := len(id)
			if i := strings.IndexByte(id[1:], '$'); i >= 0 {
				n = i + 1
			}
			if i := strings.Index(id[1:], ".."); i >= 0 && i+1 < n {
				n = i + 1
			}
			w.str(id[:n])
			id = id[n:]
		}
	}
}

var legacyEscapes = map[string]byte{"SP": '@', "BP": '*', "RF": '&', "LT": '<', "GT": '>', "LP": '(', "RP": ')'}

// legacyEscape decodes the escape at the start of e ("$C$", "$LT$",
// "$u20$"): the character and the escape's length, 0 when it is none.
func legacyEscape(e string) (byte, int) {
	end := strings.IndexByte(e[1:], '$')
	if end < 0 {
		return 0, 0
	}
	code := e[1 : 1+end]
	switch {
	case code == "C":
		return ',', 3
	case len(code) == 2 && legacyEscapes[code] != 0:
		return legacyEscapes[code], 4
	case len(code) == 3 && code[0] == 'u':
		hi, ok1 := hexNibble(code[1])
		lo, ok2 := hexNibble(code[2])
		c := hi<<4 | lo
		if ok1 && ok2 && hi <= 7 && c >= 0x20 {
			return c, 5
		}
	}
	return 0, 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isAlnum(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// hexNibble is a lowercase hex digit's value.
func hexNibble(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
