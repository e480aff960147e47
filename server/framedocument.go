package server

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/framedoc"
)

// FrameScheme is the URI scheme of the read-only document of a frame
// without local source ("<signal handler called>", a libc frame whose
// sources are not on this machine, "??"): disassembly around the frame's pc
// with its symbol, rendered by package framedoc, the same text the debug
// adapter serves as a DAP source. A URI is
//
//	faultline-frame:/<load>/<thread>/<frame>/<title>
//
// where load numbers the open dump (a document of a dump since replaced
// is refused), thread is the thread id (0: the GPU fault's inline chain),
// frame the frame's index (in the chain: the inline level less one) and
// title (framedoc.Name, escaped) is only for the editor's tab.
const FrameScheme = "faultline-frame"

// MethodFrameDocument is the custom request returning a frame document's
// text: params FrameDocumentParams, result FrameDocument.
const MethodFrameDocument = "faultline/frameDocument"

// FrameDocumentParams are faultline/frameDocument's params.
type FrameDocumentParams struct {
	URI string `json:"uri"`
}

// FrameDocument is faultline/frameDocument's result.
type FrameDocument struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
	Text string `json:"text"`
	// Line is the 1-based line of the frame's pc (0: not listed).
	Line int `json:"line"`
}

// frameDocURI is the document URI of frame index fi of thread.
func frameDocURI(load uint64, thread, fi int, fr *analysis.Frame) uri.URI {
	return uri.URI(fmt.Sprintf("%s:/%d/%d/%d/%s", FrameScheme, load, thread, fi, escapeTitle(framedoc.Name(*fr))))
}

// escapeTitle percent-encodes every byte of a title but the unreserved
// ones (RFC 3986 §2.3), so that the URI reads the same after the LSP codec
// and VS Code's Uri re-encode it.
func escapeTitle(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// frameDocRef is what a frame document URI names.
type frameDocRef struct {
	load          uint64
	thread, frame int
}

// parseFrameDocURI reads a faultline-frame: URI (editors may re-escape the
// title; only the first three path segments matter).
func parseFrameDocURI(s string) (frameDocRef, error) {
	var r frameDocRef
	rest, ok := strings.CutPrefix(s, FrameScheme+":")
	if !ok {
		return r, fmt.Errorf("%q is not a %s: URI", s, FrameScheme)
	}
	parts := strings.Split(strings.TrimLeft(rest, "/"), "/")
	if len(parts) < 3 {
		return r, fmt.Errorf("%q names no load/thread/frame", s)
	}
	var err error
	if r.load, err = strconv.ParseUint(parts[0], 10, 64); err == nil {
		if r.thread, err = strconv.Atoi(parts[1]); err == nil {
			r.frame, err = strconv.Atoi(parts[2])
		}
	}
	if err != nil {
		return r, fmt.Errorf("%q: %v", s, err)
	}
	return r, nil
}

// frameDocument answers faultline/frameDocument.
func (s *Server) frameDocument(_ context.Context, p FrameDocumentParams) (*FrameDocument, error) {
	ref, err := parseFrameDocURI(p.URI)
	if err != nil {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, "faultline: "+err.Error())
	}
	doc, err := s.renderFrameDoc(ref)
	if err != nil {
		return nil, failed(err)
	}
	return &FrameDocument{URI: p.URI, Name: doc.Name, Text: doc.Text, Line: doc.Line}, nil
}

// renderFrameDoc renders the frame ref names from the open dump.
func (s *Server) renderFrameDoc(ref frameDocRef) (framedoc.Document, error) {
	s.mu.Lock()
	l := s.cur
	s.mu.Unlock()
	if l == nil || l.seq != ref.load {
		return framedoc.Document{}, errors.New("the dump this frame belongs to is no longer open")
	}
	frames := gpuChainFrames(l.view.crash)
	if ref.thread != gpuChainThread {
		frames = nil
		if t := l.view.crash.Thread(ref.thread); t != nil {
			frames = t.Frames
		}
	}
	if ref.frame < 0 || ref.frame >= len(frames) {
		return framedoc.Document{}, fmt.Errorf("the dump has no frame #%d of thread %d", ref.frame, ref.thread)
	}
	fr := frames[ref.frame]
	var doc framedoc.Document
	if !l.withSession(func(sess *analysis.Session) { doc = framedoc.ForFrame(sess, fr) }) {
		return framedoc.Document{}, errors.New("the dump this frame belongs to is no longer open")
	}
	return doc, nil
}

// gpuChainThread is the thread of the frame documents of the GPU fault's
// inline chain (no host thread has id 0).
const gpuChainThread = 0

// gpuChainFrames are the GPU fault's inline levels, innermost first (nil
// without a GPU fault).
func gpuChainFrames(c *analysis.Crash) []analysis.Frame {
	if c.GPU == nil {
		return nil
	}
	return c.GPU.Frames
}

// showFrameDoc shows the document of frame index fi of v's selected thread
// (a frame without local source) with window/showDocument, when the client
// said it can open faultline-frame: URIs (initialize's
// capabilities.experimental.faultlineFrameDocuments); otherwise the client
// opens the returned URI itself.
func (s *Server) showFrameDoc(ctx context.Context, v *view, fi int) (*frameLocation, error) {
	return s.showDoc(ctx, v, v.thread.ID, fi, v.sites[fi].frame)
}

// showDoc shows the document of frame fr, index fi of thread (or of the
// GPU chain: gpuChainThread), as showFrameDoc does.
func (s *Server) showDoc(ctx context.Context, v *view, thread, fi int, fr *analysis.Frame) (*frameLocation, error) {
	if v.src == nil {
		return nil, errors.New("the dump is still loading")
	}
	u := frameDocURI(v.src.seq, thread, fi, fr)
	doc, err := s.renderFrameDoc(frameDocRef{load: v.src.seq, thread: thread, frame: fi})
	if err != nil {
		return nil, err
	}
	loc := &frameLocation{URI: string(u), Line: doc.Line, Document: true}
	s.mu.Lock()
	canShow := s.caps.showDocument && s.caps.frameDocuments
	s.mu.Unlock()
	if !canShow {
		return loc, nil
	}
	line := uint32(max(doc.Line-1, 0))
	r := protocol.Range{Start: protocol.Position{Line: line}, End: protocol.Position{Line: line}}
	yes := true
	res, err := s.client.ShowDocument(ctx, &protocol.ShowDocumentParams{URI: u, TakeFocus: &yes, Selection: &r})
	if err != nil {
		return nil, fmt.Errorf("window/showDocument: %w", err)
	}
	loc.Shown = res != nil && res.Success
	return loc, nil
}
