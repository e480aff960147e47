package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/faultline-dev/faultline/analysis/model"
)

// threadsKey is where the threads array sits in the indented encoding of a
// Crash: a key at the top level is the only one indented by two spaces.
const threadsKey = "\n  \"threads\": null"

// JSON writes the model exactly as `faultline analyze --json` prints it
// (encoding/json's indented output, byte for byte), without building the
// whole document in memory: the threads, nearly all of a large core's
// output, are written as they are encoded.
func JSON(w io.Writer, c *model.Crash) error {
	if len(c.Threads) == 0 {
		return encodeIndented(w, c)
	}
	shell := *c
	shell.Threads = nil
	var head bytes.Buffer
	if err := encodeIndented(&head, &shell); err != nil {
		return err
	}
	doc := head.Bytes()
	at := bytes.Index(doc, []byte(threadsKey))
	if at < 0 {
		return encodeIndented(w, c) // cannot happen while Crash has the key
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(doc[:at+len(threadsKey)-len("null")])
	var buf []byte
	buf = append(buf, '[')
	for i := range c.Threads {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendThread(buf, &c.Threads[i])
		if len(buf) > 32<<10 {
			bw.Write(buf)
			buf = buf[:0]
		}
	}
	buf = append(buf, "\n  ]"...)
	bw.Write(buf)
	bw.Write(doc[at+len(threadsKey):])
	return bw.Flush()
}

func encodeIndented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// appendThread appends one element of the threads array as encoding/json
// indents it at depth 2 (the fields and omitempty rules of model.Thread).
func appendThread(b []byte, t *model.Thread) []byte {
	b = append(b, "\n    {\n      \"id\": "...)
	b = strconv.AppendInt(b, int64(t.ID), 10)
	b = append(b, ",\n      \"crashed\": "...)
	b = strconv.AppendBool(b, t.Crashed)
	if t.Name != "" {
		b = appendField(b, "\n      \"name\": ", t.Name)
	}
	b = append(b, ",\n      \"frames\": "...)
	switch {
	case t.Frames == nil:
		b = append(b, "null"...)
	case len(t.Frames) == 0:
		b = append(b, "[]"...)
	default:
		b = append(b, '[')
		for i := range t.Frames {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendFrame(b, &t.Frames[i])
		}
		b = append(b, "\n      ]"...)
	}
	if t.Truncated != "" {
		b = appendField(b, "\n      \"truncated\": ", t.Truncated)
	}
	return append(b, "\n    }"...)
}

// appendFrame appends one frame as encoding/json indents it at depth 4.
func appendFrame(b []byte, f *model.Frame) []byte {
	const in = "\n          \""
	b = append(b, "\n        {"+in+"index\": "...)
	b = strconv.AppendInt(b, int64(f.Index), 10)
	b = appendField(b, in+"pc\": ", f.PC)
	for _, kv := range [...]struct{ key, val string }{
		{in + "module\": ", f.Module}, {in + "function\": ", f.Function}, {in + "file\": ", f.File},
	} {
		if kv.val != "" {
			b = appendField(b, kv.key, kv.val)
		}
	}
	if f.Line != 0 {
		b = append(b, ","+in+"line\": "...)
		b = strconv.AppendInt(b, int64(f.Line), 10)
	}
	if f.Column != 0 {
		b = append(b, ","+in+"column\": "...)
		b = strconv.AppendInt(b, int64(f.Column), 10)
	}
	b = append(b, ","+in+"inlined\": "...)
	b = strconv.AppendBool(b, f.Inlined)
	for _, kv := range [...]struct{ key, val string }{
		{in + "trust\": ", string(f.Trust)}, {in + "source\": ", f.Source}, {in + "language\": ", f.Language},
	} {
		if kv.val != "" {
			b = appendField(b, kv.key, kv.val)
		}
	}
	return append(b, "\n        }"...)
}

// appendField appends ",KEY" and the value as a JSON string.
func appendField(b []byte, key, val string) []byte {
	b = append(b, ',')
	b = append(b, key...)
	return appendJSONString(b, val)
}

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s as encoding/json does with HTML escaping off:
// '"' and '\\' escaped, control bytes as \b \f \n \r \t or \u00XX, invalid
// UTF-8 as \ufffd, and U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			b = appendEscapedByte(b, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func appendEscapedByte(b []byte, c byte) []byte {
	switch c {
	case '\\', '"':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}
