package job

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/faultline-dev/faultline/analysis/model"
)

// maxFileBytes caps one per-rank file (a full crash model of a large
// process, not only a summary, must still be readable).
const maxFileBytes = 64 << 20

// Loaded is one per-rank file that decoded.
type Loaded struct {
	File    string
	Summary *Summary
}

// FileProblem is a per-rank file that could not be merged, or a note about
// one (a duplicate rank).
type FileProblem struct {
	File    string `json:"file"`
	Offset  int64  `json:"offset,omitempty"`
	Message string `json:"message"`
}

// LoadError is why one file did not decode, with the byte offset where
// decoding stopped when there is one.
type LoadError struct {
	Offset int64
	Err    error
}

func (e *LoadError) Error() string {
	if e.Offset > 0 {
		return fmt.Sprintf("at byte %d: %v", e.Offset, e.Err)
	}
	return e.Err.Error()
}

func (e *LoadError) Unwrap() error { return e.Err }

// mergeWindow bounds how many decoded summaries wait to be merged.
const mergeWindow = 64

// MergeDir reads every regular file of dir (not recursively, hidden files
// skipped) as a rank summary and merges them: files are decoded in
// parallel and merged in file-name order, so at most mergeWindow decoded
// summaries are held at once. Files that do not decode become problems.
func MergeDir(dir string) (*Report, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if e.Type().IsRegular() && e.Name()[0] != '.' {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(files)
	type result struct {
		sums []*Summary
		err  error
	}
	ready := make([]chan result, len(files))
	for i := range ready {
		ready[i] = make(chan result, 1)
	}
	window := make(chan struct{}, mergeWindow)
	go parallel(len(files), func(i int) {
		sums, err := LoadFile(files[i])
		ready[i] <- result{sums, err}
	}, window)
	m := NewMerger()
	for i, f := range files {
		r := <-ready[i]
		<-window
		if r.err != nil {
			m.Problem(fileProblem(f, r.err))
			continue
		}
		for _, s := range r.sums {
			m.Add(f, s)
		}
	}
	return m.Report(), nil
}

// LoadFile reads one per-rank file: a rank summary, summary lines (of
// `analyze --json --summary` over several cores), or a full crash model
// (`analyze --json`) with a job object.
func LoadFile(path string) ([]*Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > maxFileBytes {
		return nil, fmt.Errorf("%d bytes, larger than %d: not a rank summary", st.Size(), maxFileBytes)
	}
	bp := readBuffers.Get().(*[]byte)
	defer readBuffers.Put(bp)
	if int64(cap(*bp)) < st.Size() {
		*bp = make([]byte, st.Size())
	}
	b := (*bp)[:st.Size()]
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, err
	}
	return decodeLines(b) // decoded values do not alias b
}

// decodeLines decodes a file of one JSON document, or of summary lines.
func decodeLines(b []byte) ([]*Summary, error) {
	b = bytes.TrimSpace(b)
	if schemaOf(b) != SummarySchema || bytes.IndexByte(b, '\n') < 0 {
		s, err := Decode(b)
		return []*Summary{s}, err
	}
	var out []*Summary
	var offset int64
	for line := range bytes.Lines(b) {
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			s, err := Decode(trimmed)
			if err != nil {
				if le, ok := err.(*LoadError); ok {
					le.Offset += offset
				}
				return nil, fmt.Errorf("summary line %d: %w", len(out)+1, err)
			}
			out = append(out, s)
		}
		offset += int64(len(line))
	}
	return out, nil
}

// readBuffers recycles file buffers across the files of a merge.
var readBuffers = sync.Pool{New: func() any { return new([]byte) }}

// Decode parses one per-rank file's bytes and checks that its stacks only
// index its frame table.
func Decode(b []byte) (*Summary, error) {
	schema := schemaOf(b)
	if schema == "" {
		var probe struct {
			Schema string `json:"schema"`
		}
		if err := json.Unmarshal(b, &probe); err != nil {
			return nil, jsonError(err)
		}
		schema = probe.Schema
	}
	switch schema {
	case SummarySchema:
		s := new(Summary)
		if err := jsonv2.Unmarshal(b, s); err != nil {
			return nil, jsonError(err)
		}
		s.bound()
		return s, s.validate()
	case model.Schema:
		var c struct {
			model.Crash
			Job *Info `json:"job"`
		}
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, jsonError(err)
		}
		var in Info
		if c.Job != nil {
			in = *c.Job
		}
		return Summarize(&c.Crash, in), nil
	}
	return nil, &LoadError{Err: fmt.Errorf("schema %q is neither %s nor %s", schema, SummarySchema, model.Schema)}
}

// schemaOf reads the schema of a file that starts with it, as faultline
// writes them, without decoding the rest ("" otherwise).
func schemaOf(b []byte) string {
	b = bytes.TrimLeft(b, " \t\r\n")
	for _, s := range []string{SummarySchema, model.Schema} {
		for _, prefix := range []string{`{"schema":"`, "{\n  \"schema\": \""} {
			if bytes.HasPrefix(b, []byte(prefix+s+`"`)) {
				return s
			}
		}
	}
	return ""
}

func (s *Summary) validate() error {
	for i, st := range s.Stacks {
		for _, f := range st.Frames {
			if f < 0 || f >= len(s.Frames) {
				return &LoadError{Err: fmt.Errorf("stack %d names frame %d of a table of %d", i, f, len(s.Frames))}
			}
		}
	}
	return nil
}

func jsonError(err error) error {
	var offset int64
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var syn *jsontext.SyntacticError
	var sem *jsonv2.SemanticError
	switch {
	case errors.As(err, &se):
		offset = se.Offset
	case errors.As(err, &te):
		offset = te.Offset
	case errors.As(err, &syn):
		offset = syn.ByteOffset
	case errors.As(err, &sem):
		offset = sem.ByteOffset
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "unexpected end of JSON input") {
		return &LoadError{Offset: offset, Err: errors.New("truncated: the JSON ends early")}
	}
	return &LoadError{Offset: offset, Err: err}
}

func fileProblem(file string, err error) FileProblem {
	p := FileProblem{File: file, Message: err.Error()}
	var le *LoadError
	if errors.As(err, &le) {
		p.Offset, p.Message = le.Offset, le.Err.Error()
	}
	return p
}

// parallel runs fn(0..n-1) on GOMAXPROCS goroutines, in order of i,
// taking a slot of window before each call (the caller frees them).
func parallel(n int, fn func(i int), window chan struct{}) {
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < min(n, runtime.GOMAXPROCS(0)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		window <- struct{}{}
		next <- i
	}
	close(next)
	wg.Wait()
}
