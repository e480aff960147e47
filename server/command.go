package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.uber.org/zap"
)

// ExecuteCommand runs the faultline.* commands (LSP 3.17
// §"Execute a command"). Each takes at most one argument object.
func (s *Server) ExecuteCommand(ctx context.Context, params *protocol.ExecuteCommandParams) (protocol.LSPAny, error) {
	var arg json.RawMessage
	switch len(params.Arguments) {
	case 0:
	case 1:
		arg = json.RawMessage(params.Arguments[0])
	default:
		return nil, invalidParams("%s takes one argument object, got %d arguments", params.Command, len(params.Arguments))
	}
	s.log.Debug("executeCommand", zap.String("command", params.Command), zap.ByteString("argument", arg))
	run, ok := commandHandlers[params.Command]
	if !ok {
		return nil, invalidParams("unknown command %q", params.Command)
	}
	res, err := run(s, ctx, arg, params)
	if err != nil {
		return nil, err
	}
	return marshalAny(res)
}

// A commandHandler runs one command with its argument (empty when there
// is none); its result is the command's answer.
type commandHandler func(s *Server, ctx context.Context, arg json.RawMessage, params *protocol.ExecuteCommandParams) (any, error)

// commandHandlers is the table of the faultline.* commands.
var commandHandlers = map[string]commandHandler{
	CommandOpen:         (*Server).runOpen,
	CommandJobReport:    (*Server).runJobReport,
	CommandClose:        (*Server).runClose,
	CommandSelectThread: (*Server).runSelectThread,
	CommandGotoFrame:    (*Server).runGotoFrame,
	CommandFetchSources: (*Server).runFetchSources,
	CommandShowCommit:   (*Server).runShowCommit,
	CommandReport:       (*Server).runReport,
}

func (s *Server) runOpen(ctx context.Context, arg json.RawMessage, params *protocol.ExecuteCommandParams) (any, error) {
	var a OpenArgs
	if err := decodeArg(arg, &a); err != nil {
		return nil, invalidParams("%s: %v", CommandOpen, err)
	}
	sum, err := s.openDump(ctx, a, params.WorkDoneToken)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, requestCancelled(err)
		}
		return nil, jsonrpc2.NewError(jsonrpc2.Code(protocol.LSPErrorCodesRequestFailed), err.Error())
	}
	return sum, nil
}

func (s *Server) runJobReport(ctx context.Context, arg json.RawMessage, _ *protocol.ExecuteCommandParams) (any, error) {
	var a JobReportArgs
	if err := decodeArg(arg, &a); err != nil {
		return nil, invalidParams("%s: %v", CommandJobReport, err)
	}
	rep, err := s.jobReport(ctx, a)
	if err != nil {
		return nil, failed(err)
	}
	return rep, nil
}

func (s *Server) runClose(context.Context, json.RawMessage, *protocol.ExecuteCommandParams) (any, error) {
	return map[string]bool{"closed": s.closeDump()}, nil
}

func (s *Server) runSelectThread(_ context.Context, arg json.RawMessage, _ *protocol.ExecuteCommandParams) (any, error) {
	var a struct {
		Thread int `json:"thread"`
	}
	if err := decodeArg(arg, &a); err != nil || a.Thread == 0 {
		return nil, invalidParams(`%s wants {"thread": id}`, CommandSelectThread)
	}
	if err := s.rebuild(a.Thread); err != nil {
		return nil, failed(err)
	}
	v := s.current()
	return summarize(v), nil
}

func (s *Server) runGotoFrame(ctx context.Context, arg json.RawMessage, _ *protocol.ExecuteCommandParams) (any, error) {
	var a struct {
		Thread int `json:"thread"`
		Frame  int `json:"frame"`
		// Level is a GPU inline level (1 = innermost) to show instead.
		Level int `json:"level"`
	}
	if err := decodeArg(arg, &a); err != nil {
		return nil, invalidParams(`%s wants {"thread": id, "frame": n} or {"level": k}`, CommandGotoFrame)
	}
	var loc *frameLocation
	var err error
	if a.Level != 0 {
		loc, err = s.gotoGPULevel(ctx, a.Level)
	} else {
		loc, err = s.gotoFrame(ctx, a.Thread, a.Frame)
	}
	if err != nil {
		return nil, failed(err)
	}
	return loc, nil
}

func (s *Server) runFetchSources(ctx context.Context, arg json.RawMessage, params *protocol.ExecuteCommandParams) (any, error) {
	var a FetchSourcesArgs
	if err := decodeArg(arg, &a); err != nil {
		return nil, invalidParams(`%s wants {} or {"fix": commit}: %v`, CommandFetchSources, err)
	}
	res, err := s.fetchSources(ctx, a, params.WorkDoneToken)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, requestCancelled(err)
		}
		s.showMessage(protocol.MessageTypeError, "faultline: fetching sources: "+err.Error())
		return nil, failed(err)
	}
	return res, nil
}

func (s *Server) runShowCommit(ctx context.Context, arg json.RawMessage, _ *protocol.ExecuteCommandParams) (any, error) {
	var a ShowCommitArgs
	if err := decodeArg(arg, &a); err != nil {
		return nil, invalidParams(`%s wants {"repo": url, "commit": hash}: %v`, CommandShowCommit, err)
	}
	res, err := s.showCommit(ctx, a)
	if err != nil {
		return nil, failed(err)
	}
	return res, nil
}

func (s *Server) runReport(ctx context.Context, _ json.RawMessage, _ *protocol.ExecuteCommandParams) (any, error) {
	path, err := s.writeReport(ctx)
	if err != nil {
		return nil, failed(err)
	}
	return map[string]string{"path": path}, nil
}

// decodeArg decodes a command argument strictly; an absent argument is
// decoded from {}.
func decodeArg(arg json.RawMessage, v any) error {
	if len(bytes.TrimSpace(arg)) == 0 {
		arg = json.RawMessage("{}")
	}
	if _, isOpen := v.(*OpenArgs); isOpen {
		return json.Unmarshal(arg, v)
	}
	dec := json.NewDecoder(bytes.NewReader(arg))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func invalidParams(format string, args ...any) error {
	return jsonrpc2.NewError(jsonrpc2.InvalidParams, "faultline: "+fmt.Sprintf(format, args...))
}

// requestCancelled answers a request whose work was cancelled, from the
// progress notification (window/workDoneProgress/cancel), by
// $/cancelRequest or by a later faultline.open: RequestCancelled (-32800,
// LSP 3.17 §"Cancellation Support"), which clients do not show as an error.
func requestCancelled(err error) error {
	return jsonrpc2.NewError(protocol.CodeRequestCancelled, "faultline: "+err.Error())
}

func failed(err error) error {
	return jsonrpc2.NewError(jsonrpc2.Code(protocol.LSPErrorCodesRequestFailed), "faultline: "+err.Error())
}

// frameLocation is faultline.gotoFrame's result.
type frameLocation struct {
	URI   string `json:"uri"`
	Line  int    `json:"line"` // 1-based, as in the crash model
	Shown bool   `json:"shown"`
	// Document is set when URI is a frame document (faultline-frame:) of
	// a frame without local source.
	Document bool `json:"document,omitempty"`
}

// gotoFrame selects thread (when it is not the selected one) and shows the
// frame's line with window/showDocument.
func (s *Server) gotoFrame(ctx context.Context, thread, frame int) (*frameLocation, error) {
	v := s.current()
	if v == nil {
		return nil, errors.New("no dump is open")
	}
	if v.thread == nil {
		return nil, errors.New("the crash has no threads (a GPU fault's inline levels take {\"level\": k})")
	}
	if thread != 0 && thread != v.thread.ID {
		if err := s.rebuild(thread); err != nil {
			return nil, err
		}
		v = s.current()
	}
	if frame < 0 || frame >= len(v.sites) {
		return nil, fmt.Errorf("thread %d has no frame #%d", v.thread.ID, frame)
	}
	st := v.sites[frame]
	if st.path == "" {
		return s.showFrameDoc(ctx, v, frame)
	}
	return s.showSite(ctx, v, st)
}

// gotoGPULevel shows the line of GPU inline level k (1 = innermost).
func (s *Server) gotoGPULevel(ctx context.Context, k int) (*frameLocation, error) {
	v := s.current()
	if v == nil {
		return nil, errors.New("no dump is open")
	}
	gs, ok := v.gpuLevel(k)
	if !ok {
		return nil, fmt.Errorf("the crash has no GPU inline level %d", k)
	}
	if gs.path == "" {
		// Not on this machine: the level's read-only frame document.
		return s.showDoc(ctx, v, gpuChainThread, k-1, gs.frame)
	}
	return s.showSite(ctx, v, gs.site)
}

// showSite shows a site's line with window/showDocument, when the client can.
func (s *Server) showSite(ctx context.Context, v *view, st site) (*frameLocation, error) {
	loc := &frameLocation{URI: string(st.uri), Line: st.frame.Line}
	s.mu.Lock()
	canShow := s.caps.showDocument
	s.mu.Unlock()
	if canShow {
		r := v.lineRange(st)
		yes := true
		res, err := s.client.ShowDocument(ctx, &protocol.ShowDocumentParams{URI: st.uri, TakeFocus: &yes, Selection: &r})
		if err != nil {
			return nil, fmt.Errorf("window/showDocument: %w", err)
		}
		loc.Shown = res != nil && res.Success
	}
	return loc, nil
}
