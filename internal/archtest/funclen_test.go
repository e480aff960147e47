package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function may be, counted from its `func`
// line to its closing brace, both included (ARCHITECTURE.md's invariants).
const maxFuncLines = 80

// generated matches the line Go's convention puts in generated files
// (https://go.dev/s/generatedcode).
var generated = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// longFunc is one function over the limit.
type longFunc struct {
	pos   token.Position // where its `func` keyword is
	name  string
	lines int
}

// funcLines is how many lines n spans, its first and last line included.
func funcLines(fset *token.FileSet, n ast.Node) int {
	return fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1
}

// declName names a function declaration the way a reader looks it up:
// "Recv.Name" for a method, "Name" for a function.
func declName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + d.Name.Name
		}
		return d.Name.Name
	}
}

// longFuncsInFile parses one file and returns its functions, methods and
// top-level func literals (`var f = func() {...}`, or one inside a
// top-level table) longer than max lines. A function's func literals count
// as part of it.
func longFuncsInFile(fset *token.FileSet, path string, src []byte, max int) ([]longFunc, error) {
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []longFunc
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if n := funcLines(fset, d); n > max {
				out = append(out, longFunc{fset.Position(d.Pos()), declName(d), n})
			}
		case *ast.GenDecl:
			ast.Inspect(d, func(n ast.Node) bool {
				lit, ok := n.(*ast.FuncLit)
				if !ok {
					return true
				}
				if lines := funcLines(fset, lit); lines > max {
					out = append(out, longFunc{fset.Position(lit.Pos()), "func literal", lines})
				}
				return false // a literal's inner literals are part of it
			})
		}
	}
	return out, nil
}

// moduleGoFiles lists the module's non-test, non-generated Go files,
// leaving out testdata, hidden directories and nested modules.
func moduleGoFiles(t *testing.T, root string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path == root {
				return nil
			}
			if name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !generated.Match(src) {
			files[path] = src
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestNoFunctionOver80Lines holds every function of the module (methods and
// top-level func literals too) to maxFuncLines. There is no exceptions list.
func TestNoFunctionOver80Lines(t *testing.T) {
	root := "../.."
	files := moduleGoFiles(t, root)
	if len(files) < 100 {
		t.Fatalf("found only %d Go files under %s", len(files), root)
	}
	fset := token.NewFileSet()
	var long []longFunc
	for path, src := range files {
		l, err := longFuncsInFile(fset, path, src, maxFuncLines)
		if err != nil {
			t.Fatal(err)
		}
		long = append(long, l...)
	}
	sort.Slice(long, func(i, j int) bool {
		if long[i].lines != long[j].lines {
			return long[i].lines > long[j].lines
		}
		return long[i].pos.String() < long[j].pos.String()
	})
	for _, f := range long {
		rel, _ := filepath.Rel(root, f.pos.Filename)
		t.Errorf("%s:%d: %s is %d lines (at most %d): split it into well-named functions", rel, f.pos.Line, f.name, f.lines, maxFuncLines)
	}
	t.Logf("%d files, %d functions over %d lines", len(files), len(long), maxFuncLines)
}

// TestLongFuncsFound feeds the checker a method of 81 lines, a function of
// exactly 80 and a func literal of 81 in a top-level table, so a checker that
// can never fire, or one that is off by one, fails here.
func TestLongFuncsFound(t *testing.T) {
	body := func(n int) string { return strings.Repeat("\tx++\n", n-2) } // with `func` and `}`: n lines
	src := "package p\n\ntype T[E any] struct{}\n\n" +
		"func (t *T[E]) long() {\n" + body(81) + "}\n\n" +
		"func ok() {\n" + body(80) + "}\n\n" +
		"var table = []func(){\n\tfunc() {\n" + body(81) + "\t},\n}\n"
	fset := token.NewFileSet()
	got, err := longFuncsInFile(fset, "p.go", []byte(src), maxFuncLines)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"T.long": 81, "func literal": 81}
	if len(got) != len(want) {
		t.Fatalf("found %v, want %v", got, want)
	}
	for _, f := range got {
		if want[f.name] != f.lines {
			t.Errorf("%s: %d lines, want %d", f.name, f.lines, want[f.name])
		}
	}
}
