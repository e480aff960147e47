package dap

import (
	"fmt"
	"strconv"
	"strings"

	godap "github.com/google/go-dap"

	"github.com/faultline-dev/faultline/analysis"
)

// onEvaluate answers the Watch view, hovers and the debug console for the
// simple expressions a dump can answer without a compiler: a variable of
// the frame, members (a.b, p->b), array elements (a[3]) and registers
// ($rax).
func (s *Server) onEvaluate(r *godap.EvaluateRequest) {
	v := s.model
	a := r.Arguments
	t, fi, ok := v.frame(a.FrameId)
	if !ok {
		t, fi, ok = v.frame(v.frameID(0, 0)) // no frame: the crashing thread's top frame
	}
	if !ok {
		s.errorResponse(&r.Request, errNotFound, "no frame to evaluate %q in", a.Expression)
		return
	}
	hex := a.Format != nil && a.Format.Hex
	expr := strings.TrimSpace(a.Expression)
	resp := &godap.EvaluateResponse{Response: response(&r.Request)}
	if reg, ok := strings.CutPrefix(expr, "$"); ok {
		val, found := t.frames[fi].Regs[reg]
		if !found {
			s.errorResponse(&r.Request, errNotFound, "no register %s in frame #%d", expr, fi)
			return
		}
		resp.Body = godap.EvaluateResponseBody{Result: fmt.Sprintf("%#x", val), Type: "uint64", MemoryReference: fmt.Sprintf("%#x", val)}
		s.send(resp)
		return
	}
	vals, err := v.frameValues(t, fi)
	if err != nil {
		s.errorResponse(&r.Request, errNotFound, "cannot read the values of frame #%d: %v", fi, err)
		return
	}
	x, err := lookupPath(vals, expr)
	if err != nil {
		s.errorResponse(&r.Request, errNotFound, "%v", err)
		return
	}
	dv := v.variable(x, "", hex)
	resp.Body = godap.EvaluateResponseBody{Result: dv.Value, Type: dv.Type, VariablesReference: dv.VariablesReference,
		NamedVariables: dv.NamedVariables, MemoryReference: dv.MemoryReference}
	s.send(resp)
}

// lookupPath finds expr ("name", "a.b", "p->b", "a[3]", "a[1].b") among vals.
func lookupPath(vals []analysis.Value, expr string) (analysis.Value, error) {
	steps, err := splitPath(expr)
	if err != nil {
		return analysis.Value{}, err
	}
	cur := vals
	var found analysis.Value
	for i, st := range steps {
		ok := false
		for _, x := range cur {
			if x.Name == st.name {
				found, ok = x, true
				break
			}
		}
		if !ok {
			if i == 0 {
				return analysis.Value{}, fmt.Errorf("no symbol %q in this frame", st.name)
			}
			// The expression as written up to here: "head->next", not "headnext".
			return analysis.Value{}, fmt.Errorf("%s has no member or element %s (of those read from the dump)", expr[:steps[i-1].end], st.name)
		}
		cur = found.Members
	}
	return found, nil
}

// pathStep is one name or element of an expression, and where it ends
// in the expression.
type pathStep struct {
	name string
	end  int
}

// splitPath splits "a->b.c[2]" into "a", "b", "c", "[2]".
func splitPath(expr string) ([]pathStep, error) {
	var out []pathStep
	rest := expr
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, "->"):
			rest = rest[2:]
		case strings.HasPrefix(rest, "."):
			rest = rest[1:]
		case strings.HasPrefix(rest, "["):
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("unbalanced [ in %q", expr)
			}
			n, err := strconv.Atoi(strings.TrimSpace(rest[1:end]))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("index %q in %q is not a non-negative integer", rest[1:end], expr)
			}
			rest = rest[end+1:]
			out = append(out, pathStep{"[" + strconv.Itoa(n) + "]", len(expr) - len(rest)})
			continue
		}
		n := 0
		for n < len(rest) && (isIdent(rest[n]) || (rest[n] == ':' && n+1 < len(rest) && rest[n+1] == ':')) {
			if rest[n] == ':' {
				n++
			}
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("cannot evaluate %q: only variable names, members (a.b, p->b), elements (a[3]) and registers ($rax)", expr)
		}
		name := rest[:n]
		rest = rest[n:]
		out = append(out, pathStep{name, len(expr) - len(rest)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty expression")
	}
	return out, nil
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
