package server

import (
	"context"
	"fmt"
	"sync"

	"go.lsp.dev/protocol"
	"go.uber.org/zap"
)

// progress reports one piece of work with $/progress (LSP 3.17
// §"Work Done Progress"): begin, reports when the percentage moves, end.
type progress struct {
	s     *Server
	token protocol.ProgressToken // nil: nothing is reported
	key   string

	// messages: report messages of steps of unknown size too.
	messages bool

	mu      sync.Mutex
	percent int
	message string
	ended   bool
}

var progressSeq struct {
	sync.Mutex
	n int
}

// beginProgress starts reporting on token, the request's workDoneToken, or
// on a token created with window/workDoneProgress/create when the client
// supports it. cancel is called if the user cancels the progress.
func (s *Server) beginProgress(ctx context.Context, token protocol.ProgressToken, title string, cancel context.CancelFunc) *progress {
	p := &progress{s: s, token: token, percent: -1}
	s.mu.Lock()
	canCreate := s.caps.workDoneProgress
	s.mu.Unlock()
	if p.token == nil && canCreate {
		progressSeq.Lock()
		progressSeq.n++
		t := protocol.String(fmt.Sprintf("faultline/%d", progressSeq.n))
		progressSeq.Unlock()
		if err := s.client.WorkDoneProgressCreate(ctx, &protocol.WorkDoneProgressCreateParams{Token: t}); err != nil {
			s.log.Debug("window/workDoneProgress/create failed", zap.Error(err))
		} else {
			p.token = t
		}
	}
	if p.token == nil {
		return p
	}
	p.key = tokenKey(p.token)
	s.mu.Lock()
	s.loads[p.key] = cancel
	s.mu.Unlock()
	yes := true
	zero := uint32(0)
	p.send(&protocol.WorkDoneProgressBegin{Kind: "begin", Title: title, Cancellable: &yes, Percentage: &zero})
	return p
}

// report tells that done of total steps are done; with total 0 (unknown)
// it reports msg alone, when it changed.
func (p *progress) report(msg string, done, total int) {
	if p.token == nil || (total <= 0 && (msg == "" || !p.messages)) {
		return
	}
	p.mu.Lock()
	if p.ended {
		p.mu.Unlock()
		return
	}
	rep := &protocol.WorkDoneProgressReport{Kind: "report", Message: &msg}
	if total > 0 {
		pct := min(100, max(0, done*100/total))
		if pct == p.percent && (!p.messages || msg == p.message) {
			p.mu.Unlock()
			return
		}
		p.percent = pct
		u := uint32(pct)
		rep.Percentage = &u
	} else if msg == p.message {
		p.mu.Unlock()
		return
	}
	p.message = msg
	p.mu.Unlock()
	p.send(rep)
}

// end finishes the progress; later calls do nothing.
func (p *progress) end(msg string) {
	if p.token == nil {
		return
	}
	p.mu.Lock()
	ended := p.ended
	p.ended = true
	p.mu.Unlock()
	if ended {
		return
	}
	p.s.mu.Lock()
	delete(p.s.loads, p.key)
	p.s.mu.Unlock()
	end := &protocol.WorkDoneProgressEnd{Kind: "end"}
	if msg != "" {
		end.Message = &msg
	}
	p.send(end)
}

func (p *progress) send(v any) {
	b, err := protocol.Marshal(v)
	if err != nil {
		return
	}
	if err := p.s.client.Progress(p.s.ctx, &protocol.ProgressParams{Token: p.token, Value: b}); err != nil {
		p.s.log.Debug("$/progress failed", zap.Error(err))
	}
}

// WorkDoneProgressCancel cancels the load reporting on the token
// (window/workDoneProgress/cancel).
func (s *Server) WorkDoneProgressCancel(_ context.Context, params *protocol.WorkDoneProgressCancelParams) error {
	s.mu.Lock()
	cancel := s.loads[tokenKey(params.Token)]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return nil
}

func tokenKey(t protocol.ProgressToken) string {
	switch t := t.(type) {
	case protocol.String:
		return "s:" + string(t)
	case protocol.Integer:
		return fmt.Sprintf("i:%d", t)
	}
	return ""
}
