package dap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	godap "github.com/google/go-dap"
	"go.uber.org/zap"

	"github.com/faultline-dev/faultline/analysis"
)

// Options configure a Server.
type Options struct {
	Logger  *zap.Logger
	Version string
}

// Server is one debug session: one client, at most one opened dump.
type Server struct {
	log  *zap.Logger
	opts Options

	wmu sync.Mutex
	w   io.Writer
	seq int

	sess       *analysis.Session
	model      *crashView
	configured bool
	stopSent   bool
	done       bool
}

// New returns a Server.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	return &Server{log: opts.Logger, opts: opts}
}

// maxQueued bounds the requests read while one is being handled.
const maxQueued = 1024

// Serve answers requests from r on w until a disconnect request, the end
// of r, or ctx ends. Requests are handled one at a time, in order, on a
// worker goroutine, while r keeps being read: the end of r ends Serve at
// once, even in the middle of a launch (which the worker finishes and
// then closes). Otherwise the dump is closed before Serve returns.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	s.w = w
	msgs := make(chan []byte)
	errc := make(chan error, 1)
	go readFrames(ctx, r, msgs, errc)
	work := make(chan []byte)
	finished := make(chan bool, 1) // after each request: whether it ended the session
	workerDone := make(chan struct{})
	go func() {
		defer close(workerDone)
		defer s.close()
		for body := range work {
			s.dispatch(body)
			finished <- s.done
		}
	}()
	busy := false
	defer func() {
		close(work)
		if !busy {
			<-workerDone
		}
	}()
	var queue [][]byte
	for {
		var next chan<- []byte
		var head []byte
		if !busy && len(queue) > 0 {
			next, head = work, queue[0]
		}
		in := msgs
		if len(queue) >= maxQueued {
			in = nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-errc:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case body := <-in:
			queue = append(queue, body)
		case next <- head:
			queue, busy = queue[1:], true
		case done := <-finished:
			busy = false
			if done {
				return nil
			}
		}
	}
}

// readFrames reads frames from r onto msgs until an error, sent on errc.
func readFrames(ctx context.Context, r io.Reader, msgs chan<- []byte, errc chan<- error) {
	fr := newFrameReader(r)
	for {
		body, err := fr.next()
		if err != nil {
			errc <- err
			return
		}
		select {
		case msgs <- body:
		case <-ctx.Done():
			return
		}
	}
}

// dispatch decodes one message and handles it. A request that does not
// decode (an unknown command, arguments of the wrong type) is answered
// with an error response; other messages are logged and dropped.
func (s *Server) dispatch(body []byte) {
	env, err := parseEnvelope(body)
	if err != nil {
		s.log.Warn("message is not JSON", zap.Error(err))
		return
	}
	m, err := godap.DecodeProtocolMessage(body)
	if err != nil {
		if env.Type == "request" {
			req := &godap.Request{ProtocolMessage: godap.ProtocolMessage{Seq: env.Seq, Type: "request"}, Command: env.Command}
			var fe *godap.DecodeProtocolMessageFieldError
			if errors.As(err, &fe) && fe.FieldName == "command" {
				s.errorResponse(req, errUnsupported, "faultline dap does not support the %q request", env.Command)
				return
			}
			s.errorResponse(req, errBadArguments, "bad arguments for %q: %v", env.Command, err)
			return
		}
		s.log.Debug("ignored message", zap.String("type", env.Type), zap.Error(err))
		return
	}
	req, ok := m.(godap.RequestMessage)
	if !ok {
		return // responses to our (no) reverse requests, events: nothing to do
	}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic in a request handler", zap.String("command", req.GetRequest().Command), zap.Any("panic", p))
			s.errorResponse(req.GetRequest(), errInternal, "internal error in %s: %v", req.GetRequest().Command, p)
		}
	}()
	s.handle(req)
}

func (s *Server) close() {
	if s.sess != nil {
		s.sess.Close()
		s.sess = nil
	}
}

// send writes one message with the next sequence number.
func (s *Server) send(m godap.Message) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.seq++
	switch v := m.(type) {
	case godap.ResponseMessage:
		v.GetResponse().Seq = s.seq
		v.GetResponse().Type = "response"
	case godap.EventMessage:
		v.GetEvent().Seq = s.seq
		v.GetEvent().Type = "event"
	}
	if err := godap.WriteProtocolMessage(s.w, m); err != nil {
		s.log.Warn("write failed", zap.Error(err))
	}
}

// response fills the common fields of a successful response to req.
func response(req *godap.Request) godap.Response {
	return godap.Response{RequestSeq: req.Seq, Success: true, Command: req.Command}
}

// errorResponse answers req with a failure the editor shows to the user.
func (s *Server) errorResponse(req *godap.Request, id int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r := &godap.ErrorResponse{Response: response(req)}
	r.Success = false
	r.Message = msg
	r.Body.Error = &godap.ErrorMessage{Id: id, Format: msg, ShowUser: true}
	s.send(r)
}

// event fills the common fields of an event.
func event(name string) godap.Event {
	return godap.Event{Event: name}
}
