package report

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// escapeControls makes text taken from dumps safe to print on a terminal:
// every C0 control character but newline and tab (BEL, BS, CR, ESC, ...),
// DEL and the C1 controls (U+0080-U+009F, which some terminals read as
// CSI and friends) are written as \xNN or \u00NN escapes. Symbol names,
// log lines, paths and messages in a crash come from the dump, so a core
// or log could otherwise ring the bell, rewrite the screen or set the
// window title.
func escapeControls(s string) string {
	if !hasControl(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f && n == 2:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || (c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f) {
			return true
		}
	}
	return false
}
