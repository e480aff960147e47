package e2e

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// readmeCommands lists the command lines of README.md's code blocks that
// run faultline: `faultline ...`, `$ faultline ...` (a transcript) and
// `go run . ...`, each without its trailing comment.
func readmeCommands(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	inBlock := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			continue
		}
		line = strings.TrimPrefix(line, "$ ")
		if !strings.HasPrefix(line, "faultline ") && !strings.HasPrefix(line, "go run . ") {
			continue
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		out = append(out, strings.TrimSpace(line))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// packageFuncs returns the functions of this package's files (Test
// functions and the helpers they call).
func packageFuncs(t *testing.T) []*ast.FuncDecl {
	t.Helper()
	files, _ := filepath.Glob("*_test.go")
	var out []*ast.FuncDecl
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Body != nil {
				out = append(out, fn)
			}
		}
	}
	return out
}

// exampleRuns finds the README examples the tests of this package run: the
// string literal given to each call of example(t, LINE, ...), with the
// function it is in (a Test function or a helper of one).
func exampleRuns(t *testing.T) map[string][]string {
	t.Helper()
	runs := map[string][]string{}
	for _, fn := range packageFuncs(t) {
		if fn.Name.Name == "example" {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) < 2 {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "example" {
				return true
			}
			if lit, ok := call.Args[1].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s, _ := strconv.Unquote(lit.Value)
				runs[s] = append(runs[s], fn.Name.Name)
			}
			return true
		})
	}
	return runs
}

// TestREADMEExamplesAreRun fails for a README example no test runs, and for
// a test that runs an example the README no longer has. It logs the table
// example → tests.
func TestREADMEExamplesAreRun(t *testing.T) {
	cmds := readmeCommands(t)
	if len(cmds) < 10 {
		t.Fatalf("found only %d command lines in README.md: %q", len(cmds), cmds)
	}
	runs := exampleRuns(t)
	inReadme := map[string]bool{}
	for _, c := range cmds {
		inReadme[c] = true
		if len(runs[c]) == 0 {
			t.Errorf("README example not run by any test: %s", c)
			continue
		}
		t.Logf("%-70s %s", c, strings.Join(runs[c], ", "))
	}
	var stale []string
	for c := range runs {
		if !inReadme[c] {
			stale = append(stale, c)
		}
	}
	sort.Strings(stale)
	for _, c := range stale {
		t.Errorf("tests %v run %q, which README.md does not show", runs[c], c)
	}
}
