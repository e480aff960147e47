package dap

import (
	godap "github.com/google/go-dap"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/framedoc"
)

// sourceRefs are the generated documents of frames without local source,
// by sourceReference (1-based), one per distinct pc.
type sourceRefs struct {
	docs []framedoc.Document
	byPC map[string]int
}

// forFrame returns f's document and its reference, rendering it once.
func (r *sourceRefs) forFrame(sess *analysis.Session, f analysis.Frame) (int, framedoc.Document) {
	key := f.PC + "\x00" + f.Function
	if ref, ok := r.byPC[key]; ok {
		return ref, r.docs[ref-1]
	}
	if r.byPC == nil {
		r.byPC = map[string]int{}
	}
	doc := framedoc.ForFrame(sess, f)
	r.docs = append(r.docs, doc)
	r.byPC[key] = len(r.docs)
	return len(r.docs), doc
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
	resp.Body = godap.SourceResponseBody{Content: docs[ref-1].Text, MimeType: "text/x-asm"}
	s.send(resp)
}
