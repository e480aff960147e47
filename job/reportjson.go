package job

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
)

// JSON writes the report as indented JSON (the call-prefix tree on one
// line), streamed: each list element and each node of the tree is encoded
// and written on its own, so the output is never held in memory whole.
func (r *Report) JSON(w io.Writer) error {
	jw := &jsonWriter{w: bufio.NewWriterSize(w, 64<<10)}
	jw.enc = json.NewEncoder(&jw.buf)
	jw.enc.SetEscapeHTML(false) // C++ names are full of < and >
	jw.raw("{\n")
	jw.field(1, "ranks", r.Ranks, false)
	jw.field(1, "missing", r.Missing, false)
	writeList(jw, 1, "classes", r.Classes)
	writeList(jw, 1, "oddOnesOut", r.OddOnesOut)
	writeList(jw, 1, "signatures", r.Signatures)
	writeList(jw, 1, "hosts", r.Hosts)
	jw.key(1, "tree")
	if r.Tree == nil {
		jw.raw("null")
	} else {
		jw.node(r.Tree)
	}
	jw.raw(",\n")
	writeList(jw, 1, "problems", r.Problems)
	jw.raw("}\n")
	if jw.err != nil {
		return jw.err
	}
	return jw.w.Flush()
}

// jsonWriter writes indented JSON piece by piece; its first error sticks.
type jsonWriter struct {
	w   *bufio.Writer
	buf bytes.Buffer
	enc *json.Encoder
	err error
}

func (jw *jsonWriter) raw(s string) {
	if jw.err == nil {
		_, jw.err = jw.w.WriteString(s)
	}
}

// value writes v encoded as it would be at indentation level depth.
func (jw *jsonWriter) value(depth int, v any) {
	if jw.err != nil {
		return
	}
	jw.buf.Reset()
	jw.enc.SetIndent(strings.Repeat("  ", depth), "  ")
	if jw.err = jw.enc.Encode(v); jw.err == nil {
		_, jw.err = jw.w.Write(bytes.TrimSuffix(jw.buf.Bytes(), []byte{'\n'}))
	}
}

func (jw *jsonWriter) key(depth int, name string) {
	jw.raw(strings.Repeat("  ", depth) + strconv.Quote(name) + ": ")
}

// field writes `"name": v` at depth, then a comma unless last.
func (jw *jsonWriter) field(depth int, name string, v any, last bool) {
	jw.key(depth, name)
	jw.value(depth, v)
	jw.endItem(last)
}

func (jw *jsonWriter) endItem(last bool) {
	if last {
		jw.raw("\n")
	} else {
		jw.raw(",\n")
	}
}

// writeList writes `"name": [...],` one element at a time (a nil list as
// null, as encoding/json does).
func writeList[T any](jw *jsonWriter, depth int, name string, list []T) {
	jw.key(depth, name)
	switch {
	case list == nil:
		jw.raw("null")
	case len(list) == 0:
		jw.raw("[]")
	default:
		jw.raw("[\n")
		for i := range list {
			jw.raw(strings.Repeat("  ", depth+1))
			jw.value(depth+1, list[i])
			jw.endItem(i == len(list)-1)
		}
		jw.raw(strings.Repeat("  ", depth) + "]")
	}
	jw.endItem(name == "problems")
}

// node writes one tree node and, recursively, its children, without
// indentation: indenting each level of a tree up to 129 deep would make
// the whitespace grow with the square of its depth.
func (jw *jsonWriter) node(n *TreeNode) {
	jw.raw(`{"function":`)
	jw.value(0, n.Function)
	jw.raw(`,"ranks":`)
	jw.value(0, n.Ranks)
	jw.raw(`,"count":` + strconv.Itoa(n.Count) + `,"threads":` + strconv.Itoa(n.Threads))
	if len(n.Children) > 0 {
		jw.raw(`,"children":[`)
		for i, c := range n.Children {
			if i > 0 {
				jw.raw(",")
			}
			jw.node(c)
		}
		jw.raw("]")
	}
	jw.raw("}")
}
