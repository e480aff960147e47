package variables

import (
	"strconv"
	"strings"
)

// repeatThreshold is gdb's `print repeats` default: a run of more than
// this many equal characters prints as '<c>' <repeats N times>.
const repeatThreshold = 10

// maxCharArray caps the bytes of a char array read to print it (gdb's
// max-value-size default).
const maxCharArray = 64 << 10

// isCharArray reports whether t is an array of char (of any signedness)
// with a known length: gdb prints those as strings.
func isCharArray(t *valueType) bool {
	e := t.target
	return t.kind == kindArray && t.size > 0 && e != nil && e.kind == kindBase && e.size == 1 && isCharEnc(e.enc)
}

// charArrayText prints the bytes of a char array as gdb's c_value_print_array
// and generic_printstr do with their defaults (print elements 200, print
// repeats 10, print null-stop off): one trailing NUL is dropped, runs of more
// than 10 equal characters print as '<c>' <repeats N times>, the rest as a
// quoted string, and "..." follows when the array is longer than 200
// characters. b holds the array's first bytes (all of it when it is at most
// maxCharArray bytes long); n is its length.
func charArrayText(b []byte, n int64) string {
	complete := int64(len(b)) == n
	if complete && len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return `""`
	}
	var parts []string
	var str strings.Builder // the quoted run being built ("" when none)
	flush := func() {
		if str.Len() > 0 {
			parts = append(parts, `"`+str.String()+`"`)
			str.Reset()
		}
	}
	printed := 0
	for i := 0; i < len(b) && printed < maxStringPreview; {
		j := i
		for j < len(b) && b[j] == b[i] {
			j++
		}
		run := j - i
		if run > repeatThreshold {
			flush()
			parts = append(parts, charLiteral(b[i])+" <repeats "+strconv.Itoa(run)+" times>")
		} else {
			run = min(run, maxStringPreview-printed)
			for k := 0; k < run; k++ {
				str.WriteString(escapeChar(b[i], '"'))
			}
			j = i + run
		}
		printed += run
		i = j
	}
	flush()
	out := strings.Join(parts, ", ")
	if printed < len(b) || !complete {
		out += "..."
	}
	return out
}
