package e2e

import (
	"strconv"
	"strings"
	"testing"
)

// example runs a README command line as written, in inv.dir: `faultline`
// is the built binary, `go` the Go command; subst holds pairs of words
// (placeholders such as core.12345) and what they stand for in this test.
func example(t *testing.T, line string, inv invocation, subst ...string) result {
	t.Helper()
	words, err := shellWords(line)
	if err != nil || len(words) == 0 {
		t.Fatalf("README example %q: %v", line, err)
	}
	for i := 0; i+1 < len(subst); i += 2 {
		found := false
		for j, w := range words {
			if w == subst[i] {
				words[j], found = subst[i+1], true
			}
		}
		if !found {
			t.Fatalf("README example %q has no word %q to substitute", line, subst[i])
		}
	}
	switch words[0] {
	case "faultline":
		return faultline(t, inv, words[1:]...)
	case "go":
		return command(t, inv, "go", words[1:]...)
	}
	t.Fatalf("README example %q: not a faultline command", line)
	return result{}
}

// shellWords splits a command line as sh does for what the README uses:
// blanks separate words, single and double quotes group.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, strconv.ErrSyntax
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
