package dap

import (
	"io"
	"path/filepath"

	godap "github.com/google/go-dap"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/regular"
	"github.com/faultline-dev/faultline/framedoc"
)

// maxFileDoc caps the bytes of a file served by reference.
const maxFileDoc = 16 << 20

// sourceRefs are the documents served by sourceReference (1-based): the
// generated ones of frames without local source, one per distinct pc, and
// the read-only copies fetched from debuginfod, one per file.
type sourceRefs struct {
	docs   []refDoc
	byPC   map[string]int
	byFile map[string]int
}

// refDoc is a document and its mimeType ("" when unsaid).
type refDoc struct {
	framedoc.Document
	mime string
}

func (r *sourceRefs) add(d refDoc) int {
	r.docs = append(r.docs, d)
	return len(r.docs)
}

// forFile returns the reference of the file at path (a fetched copy,
// served by reference so that the editor shows it read-only), reading it
// once, at most maxFileDoc bytes.
func (r *sourceRefs) forFile(path string) int {
	if ref, ok := r.byFile[path]; ok {
		return ref
	}
	if r.byFile == nil {
		r.byFile = map[string]int{}
	}
	text := ""
	if f, _, err := regular.Open(path); err == nil { // a path from DWARF: never a FIFO or a device
		b, _ := io.ReadAll(io.LimitReader(f, maxFileDoc))
		f.Close()
		text = string(b)
	}
	r.byFile[path] = r.add(refDoc{Document: framedoc.Document{Name: filepath.Base(path), Text: text}})
	return r.byFile[path]
}

// forFrame returns f's document and its reference, rendering it once.
func (r *sourceRefs) forFrame(sess *analysis.Session, f analysis.Frame) (int, framedoc.Document) {
	key := f.PC + "\x00" + f.Function
	if ref, ok := r.byPC[key]; ok {
		return ref, r.docs[ref-1].Document
	}
	if r.byPC == nil {
		r.byPC = map[string]int{}
	}
	doc := framedoc.ForFrame(sess, f)
	r.byPC[key] = r.add(refDoc{Document: doc, mime: "text/x-asm"})
	return r.byPC[key], doc
}

func (s *Server) onSource(r *godap.SourceRequest) {
	ref := r.Arguments.SourceReference
	if ref == 0 && r.Arguments.Source != nil {
		ref = r.Arguments.Source.SourceReference
	}
	docs := s.model.sources.docs
	if ref <= 0 || ref > len(docs) {
		s.errorResponse(&r.Request, errNotFound, "no source with reference %d", ref)
		return
	}
	resp := &godap.SourceResponse{Response: response(&r.Request)}
	resp.Body = godap.SourceResponseBody{Content: docs[ref-1].Text, MimeType: docs[ref-1].mime}
	s.send(resp)
}
