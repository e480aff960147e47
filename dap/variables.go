package dap

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	godap "github.com/google/go-dap"

	"github.com/faultline-dev/faultline/analysis"
)

// Kinds of variable containers.
const (
	scopeArguments = iota
	scopeLocals
	scopeRegisters
	containerMembers
)

// maxHandles caps the variable containers one session hands out (each
// expansion in the Variables view makes one).
const maxHandles = 1 << 20

// container is what a variablesReference stands for.
type container struct {
	kind    int
	thread  *dthread
	frame   int
	members []analysis.Value // containerMembers
	path    string           // evaluateName prefix of members
}

// handles maps variablesReference (1-based) to containers; scopes of a
// frame keep their reference across requests.
type handles struct {
	items  []container
	scopes map[[3]int]int // thread id, frame index, kind → reference
}

func (h *handles) add(c container) int {
	if len(h.items) >= maxHandles {
		return 0 // the view shows the value unexpandable rather than grow without bound
	}
	h.items = append(h.items, c)
	return len(h.items)
}

func (h *handles) scope(t *dthread, frame, kind int) int {
	key := [3]int{t.id, frame, kind}
	if ref, ok := h.scopes[key]; ok {
		return ref
	}
	if h.scopes == nil {
		h.scopes = map[[3]int]int{}
	}
	ref := h.add(container{kind: kind, thread: t, frame: frame})
	h.scopes[key] = ref
	return ref
}

func (h *handles) get(ref int) (*container, bool) {
	if ref <= 0 || ref > len(h.items) {
		return nil, false
	}
	return &h.items[ref-1], true
}

func (s *Server) onScopes(r *godap.ScopesRequest) {
	v := s.model
	t, fi, ok := v.frame(r.Arguments.FrameId)
	if !ok {
		s.errorResponse(&r.Request, errNotFound, "no frame %d", r.Arguments.FrameId)
		return
	}
	vals, err := v.frameValues(t, fi)
	if err != nil {
		s.output("console", fmt.Sprintf("faultline: values of frame #%d: %v\n", fi, err))
	}
	nargs := 0
	for _, x := range vals {
		if x.Argument {
			nargs++
		}
	}
	scopes := []godap.Scope{
		{Name: "Arguments", PresentationHint: "arguments", VariablesReference: v.vars.scope(t, fi, scopeArguments), NamedVariables: nargs},
		{Name: "Locals", PresentationHint: "locals", VariablesReference: v.vars.scope(t, fi, scopeLocals), NamedVariables: len(vals) - nargs},
	}
	if regs := t.frames[fi].Regs; len(regs) > 0 {
		scopes = append(scopes, godap.Scope{Name: "Registers", PresentationHint: "registers",
			VariablesReference: v.vars.scope(t, fi, scopeRegisters), NamedVariables: len(regs)})
	}
	s.send(&godap.ScopesResponse{Response: response(&r.Request), Body: godap.ScopesResponseBody{Scopes: scopes}})
}

// frameValues reads a frame's arguments and locals (none for the GPU
// lane, Python frames and frames without DWARF).
func (v *crashView) frameValues(t *dthread, fi int) ([]analysis.Value, error) {
	if t.lwp == 0 {
		return nil, nil
	}
	return v.sess.FrameValues(t.lwp, fi)
}

func (s *Server) onVariables(r *godap.VariablesRequest) {
	v := s.model
	c, ok := v.vars.get(r.Arguments.VariablesReference)
	if !ok {
		s.errorResponse(&r.Request, errNotFound, "no variables with reference %d", r.Arguments.VariablesReference)
		return
	}
	hex := r.Arguments.Format != nil && r.Arguments.Format.Hex
	var out []godap.Variable
	switch c.kind {
	case scopeArguments, scopeLocals:
		vals, _ := v.frameValues(c.thread, c.frame)
		for _, x := range vals {
			if x.Argument == (c.kind == scopeArguments) {
				out = append(out, v.variable(x, "", hex))
			}
		}
	case scopeRegisters:
		out = registerVariables(c.thread.frames[c.frame].Regs)
	case containerMembers:
		for _, x := range c.members {
			out = append(out, v.variable(x, c.path, hex))
		}
	}
	out = page(out, r.Arguments.Start, r.Arguments.Count)
	if out == nil {
		out = []godap.Variable{}
	}
	s.send(&godap.VariablesResponse{Response: response(&r.Request), Body: godap.VariablesResponseBody{Variables: out}})
}

// variable is one value as the Variables view shows it; a struct, union,
// array or pointer to one with members read from memory expands.
func (v *crashView) variable(x analysis.Value, prefix string, hex bool) godap.Variable {
	out := godap.Variable{Name: x.Name, Value: formatValue(x.Text, hex), Type: x.Type, EvaluateName: joinPath(prefix, x)}
	if len(x.Members) > 0 {
		out.VariablesReference = v.vars.add(container{kind: containerMembers, members: x.Members, path: out.EvaluateName})
		out.NamedVariables = len(x.Members)
	}
	if x.Addr != 0 {
		out.MemoryReference = fmt.Sprintf("%#x", x.Addr)
	}
	return out
}

// joinPath is the evaluateName of member x under prefix.
func joinPath(prefix string, x analysis.Value) string {
	switch {
	case prefix == "":
		return x.Name
	case strings.HasPrefix(x.Name, "["):
		return prefix + x.Name
	case x.ViaPointer:
		return prefix + "->" + x.Name
	}
	return prefix + "." + x.Name
}

// formatValue shows an integer value in hex when the client asks.
func formatValue(text string, hex bool) string {
	if !hex {
		return text
	}
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		return fmt.Sprintf("%#x", uint64(n))
	}
	return text
}

// registerOrder lists registers as gdb's `info registers` does.
var registerOrder = map[string]int{}

func init() {
	for i, r := range strings.Fields("rip rsp rbp rax rbx rcx rdx rsi rdi r8 r9 r10 r11 r12 r13 r14 r15 pc sp x29 x30") {
		registerOrder[r] = i + 1
	}
}

func registerVariables(regs map[string]uint64) []godap.Variable {
	names := make([]string, 0, len(regs))
	for n := range regs {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		oi, oj := registerOrder[names[i]], registerOrder[names[j]]
		if (oi == 0) != (oj == 0) {
			return oi != 0
		}
		if oi != oj {
			return oi < oj
		}
		return regLess(names[i], names[j])
	})
	out := make([]godap.Variable, len(names))
	for i, n := range names {
		out[i] = godap.Variable{Name: n, Value: fmt.Sprintf("%#x", regs[n]), Type: "uint64", EvaluateName: "$" + n,
			MemoryReference: fmt.Sprintf("%#x", regs[n])}
	}
	return out
}

// regLess orders x2 before x10.
func regLess(a, b string) bool {
	na, ea := strconv.Atoi(strings.TrimLeft(a, "xrw"))
	nb, eb := strconv.Atoi(strings.TrimLeft(b, "xrw"))
	if ea == nil && eb == nil && strings.TrimRight(a, "0123456789") == strings.TrimRight(b, "0123456789") {
		return na < nb
	}
	return a < b
}

// page applies a variables request's start/count.
func page(vs []godap.Variable, start, count int) []godap.Variable {
	start = min(max(start, 0), len(vs))
	vs = vs[start:]
	if count > 0 && count < len(vs) {
		vs = vs[:count]
	}
	return vs
}
