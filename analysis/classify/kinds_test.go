package classify

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis/model"
)

// modelKinds reads the Kind* constants of analysis/model, in their order.
func modelKinds(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../model/classification.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			for i, n := range v.Names {
				if !strings.HasPrefix(n.Name, "Kind") || i >= len(v.Values) {
					continue
				}
				lit, ok := v.Values[i].(*ast.BasicLit)
				if !ok {
					t.Fatalf("model.%s is not a string literal", n.Name)
				}
				s, _ := strconv.Unquote(lit.Value)
				kinds = append(kinds, s)
			}
		}
	}
	return kinds
}

// Every kind of the model has exactly one row, in the model's order, with
// a meaning and steps; the README's table of kinds lists the same rows.
func TestKindTable(t *testing.T) {
	kinds := modelKinds(t)
	if len(kinds) < 20 {
		t.Fatalf("found only %d Kind constants in analysis/model: %q", len(kinds), kinds)
	}
	var names []string
	for _, k := range Kinds {
		names = append(names, k.Name)
		if k.Meaning == "" || k.Steps == nil {
			t.Errorf("kind %s has no meaning or no steps", k.Name)
		}
	}
	if strings.Join(names, " ") != strings.Join(kinds, " ") {
		t.Errorf("classify.Kinds rows %q\nmodel's kinds   %q", names, kinds)
	}

	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\| (.+) \\|$")
	var documented []string
	for _, m := range row.FindAllStringSubmatch(string(readme), -1) {
		if KindOf(m[1]).Name != m[1] {
			continue // another table's row
		}
		documented = append(documented, m[1])
		if want := KindOf(m[1]).Meaning; m[2] != want {
			t.Errorf("README says kind %s is %q; classify.Kinds says %q", m[1], m[2], want)
		}
	}
	if strings.Join(documented, " ") != strings.Join(kinds, " ") {
		t.Errorf("README's table of kinds lists %q, want %q", documented, kinds)
	}
}

// A kind's steps name the culprit where they have a %s; an unknown name
// falls back to the unknown kind's row.
func TestKindSteps(t *testing.T) {
	c := &model.Crash{Classification: &model.Classification{Kind: model.KindDivideByZero}}
	if got := KindSteps(c, "`avg` at stats.c:9"); len(got) != 1 || got[0] != "Guard the division at `avg` at stats.c:9 against a zero divisor." {
		t.Errorf("divide-by-zero steps: %q", got)
	}
	c.Classification.Kind = "no-such-kind"
	if got := KindSteps(c, "f"); len(got) != 1 || got[0] != "Start from f." {
		t.Errorf("unknown kind's steps: %q", got)
	}
	c.Classification.Kind = model.KindDeadlock
	if got := KindSteps(c, "f"); len(got) != 2 {
		t.Errorf("deadlock steps: %q", got)
	}
	c = &model.Crash{Classification: &model.Classification{Kind: model.KindGPUIllegalAddress},
		GPU: &model.GPU{Allocation: &model.GPUAllocation{Distance: 16, Relation: "after", Size: 0}}}
	want := "Check the index or pointer used at k.cu:4 against the buffer it addresses: the access lands 16 bytes after an allocation of 0 bytes (an empty buffer: a zero-size launch input); the block/thread indices above give the index's inputs."
	if got := KindSteps(c, "k.cu:4"); len(got) != 1 || got[0] != want {
		t.Errorf("GPU illegal address steps: %q", got)
	}
}
