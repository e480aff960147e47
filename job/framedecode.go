package job

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// UnmarshalJSONFrom decodes a frame-table entry without allocating a new
// string for a function or file name seen before: a job's ranks share
// their frames, and the merge reads thousands of copies of each name.
func (f *FrameRef) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if tok, err := dec.ReadToken(); err != nil {
		return err
	} else if tok.Kind() != '{' {
		return fmt.Errorf("frame is a JSON %v, not an object", tok.Kind())
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadValue()
		if err != nil {
			return err
		}
		key := unquoted(name)
		val, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if err := f.setField(key, val); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

func (f *FrameRef) setField(key []byte, val jsontext.Value) error {
	kind := val.Kind()
	if string(key) == "line" {
		if kind != '0' {
			return fmt.Errorf("frame line is a JSON %v, not a number", kind)
		}
		n, err := strconv.Atoi(string(val))
		if err != nil {
			return fmt.Errorf("frame line %s: %w", val, err)
		}
		f.Line = n
		return nil
	}
	var dst *string
	switch string(key) { // compared, not kept: no allocation
	case "function":
		dst = &f.Function
	case "file":
		dst = &f.File
	case "module":
		dst = &f.Module
	case "language":
		dst = &f.Language
	default:
		return nil // a field from a newer writer
	}
	if kind != '"' {
		return fmt.Errorf("frame %s is a JSON %v, not a string", key, kind)
	}
	*dst = names.intern(clipBytes(unquoted(val)))
	return nil
}

// clipBytes caps a name read back from a rank file at maxNameBytes, as
// Summarize caps the names it writes.
func clipBytes(b []byte) []byte {
	if len(b) <= maxNameBytes {
		return b
	}
	return append(b[:maxNameBytes:maxNameBytes], "…"...)
}

// unquoted returns a JSON string's contents: a sub-slice when it has no
// escapes, else a decoded copy.
func unquoted(v jsontext.Value) []byte {
	if len(v) >= 2 && v[0] == '"' {
		raw := v[1 : len(v)-1]
		for _, c := range raw {
			if c == '\\' {
				b, err := jsontext.AppendUnquote(nil, v)
				if err != nil {
					return raw
				}
				return b
			}
		}
		return raw
	}
	return v
}

// maxInterned bounds the interner; names beyond it are allocated as usual.
const maxInterned = 1 << 20

// interner hands out one string per distinct name. After the first rank
// nearly every lookup is a hit, taken under the read lock without
// allocating (a map index by string(bytes) does not copy).
type interner struct {
	mu sync.RWMutex
	m  map[string]string
}

var names = &interner{m: map[string]string{}}

func (in *interner) intern(b []byte) string {
	in.mu.RLock()
	s, ok := in.m[string(b)]
	in.mu.RUnlock()
	if ok {
		return s
	}
	s = string(b)
	in.mu.Lock()
	if len(in.m) < maxInterned {
		in.m[s] = s
	}
	in.mu.Unlock()
	return s
}

// UnmarshalJSONFrom decodes the frame table entry by entry into a slice
// grown by append, not through reflection.
func (t *FrameTable) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if tok, err := dec.ReadToken(); err != nil {
		return err
	} else if tok.Kind() == 'n' {
		*t = nil
		return nil
	} else if tok.Kind() != '[' {
		return fmt.Errorf("frame table is a JSON %v, not a list", tok.Kind())
	}
	out := (*t)[:0]
	for dec.PeekKind() != ']' {
		var f FrameRef
		if err := f.UnmarshalJSONFrom(dec); err != nil {
			return err
		}
		out = append(out, f)
	}
	*t = out
	_, err := dec.ReadToken()
	return err
}

// UnmarshalJSONFrom decodes a stack: its thread and frame lists are read
// number by number into slices grown once, not through reflection.
func (st *Stack) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if tok, err := dec.ReadToken(); err != nil {
		return err
	} else if tok.Kind() != '{' {
		return fmt.Errorf("stack is a JSON %v, not an object", tok.Kind())
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadValue()
		if err != nil {
			return err
		}
		switch string(unquoted(name)) {
		case "threads":
			st.Threads, err = readInts(dec, st.Threads[:0])
		case "frames":
			st.Frames, err = readInts(dec, st.Frames[:0])
		case "crashed":
			var tok jsontext.Token
			if tok, err = dec.ReadToken(); err == nil {
				if k := tok.Kind(); k != 't' && k != 'f' {
					return fmt.Errorf("stack crashed is a JSON %v, not a boolean", k)
				}
				st.Crashed = tok.Kind() == 't'
			}
		case "elided":
			var n []int
			if n, err = readInts(dec, nil); err == nil && len(n) == 1 {
				st.Elided = n[0]
			}
		default:
			err = dec.SkipValue()
		}
		if err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

// readInts reads a JSON array of integers (or one integer) onto out.
func readInts(dec *jsontext.Decoder, out []int) ([]int, error) {
	if dec.PeekKind() == '0' {
		tok, err := dec.ReadToken()
		if err != nil {
			return out, err
		}
		n, err := tokenInt(tok)
		return append(out, n), err
	}
	if tok, err := dec.ReadToken(); err != nil {
		return out, err
	} else if tok.Kind() != '[' {
		return out, fmt.Errorf("a JSON %v, not a list of numbers", tok.Kind())
	}
	for dec.PeekKind() != ']' {
		tok, err := dec.ReadToken()
		if err != nil {
			return out, err
		}
		n, err := tokenInt(tok)
		if err != nil {
			return out, err
		}
		out = append(out, n)
	}
	_, err := dec.ReadToken()
	return out, err
}

// tokenInt is a number token as an int of at most 32 bits.
func tokenInt(tok jsontext.Token) (int, error) {
	if tok.Kind() != '0' {
		return 0, fmt.Errorf("a JSON %v, not a number", tok.Kind())
	}
	n, err := tok.Int()
	if err != nil {
		return 0, err
	}
	if n < -1<<31 || n > 1<<31 {
		return 0, fmt.Errorf("number %d out of range", n)
	}
	return int(n), nil
}
