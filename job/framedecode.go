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
		key := string(unquoted(name)) // compared, not kept: no allocation
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

func (f *FrameRef) setField(key string, val jsontext.Value) error {
	kind := val.Kind()
	if key == "line" {
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
	switch key {
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
	*dst = names.intern(unquoted(val))
	return nil
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

// interner hands out one string per distinct name.
type interner struct {
	mu sync.Mutex
	m  map[string]string
}

var names = &interner{m: map[string]string{}}

func (in *interner) intern(b []byte) string {
	in.mu.Lock()
	defer in.mu.Unlock()
	if s, ok := in.m[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(in.m) < maxInterned {
		in.m[s] = s
	}
	return s
}
