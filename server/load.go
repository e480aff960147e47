package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"go.lsp.dev/protocol"
	"go.uber.org/zap"

	"github.com/faultline-dev/faultline/analysis"
)

// withSession runs f with the open session, or reports false once it is
// closed (a later open replaced it while a request was in flight).
func (l *loaded) withSession(f func(*analysis.Session)) bool {
	if l == nil {
		return false
	}
	l.sessionMu.Lock()
	defer l.sessionMu.Unlock()
	if l.session == nil {
		return false
	}
	f(l.session)
	return true
}

// loaded is an opened dump and its current view.
type loaded struct {
	// seq numbers the loads of a server, for frame document URIs.
	seq     uint64
	args    OpenArgs
	session *analysis.Session
	view    *view
	// sources is what faultline.fetchSources found (guarded by Server.mu).
	sources *fetchedSources

	sessionMu sync.Mutex // Session reads are not safe for concurrent use
}

func (l *loaded) close() {
	if l == nil {
		return
	}
	l.sessionMu.Lock()
	defer l.sessionMu.Unlock()
	l.session.Close()
	l.session = nil
}

// OpenSummary is faultline.open's result.
type OpenSummary struct {
	Dump     string `json:"dump"`
	Format   string `json:"format"`
	Signal   string `json:"signal,omitempty"`
	Summary  string `json:"summary"`
	Thread   int    `json:"thread"`
	Threads  int    `json:"threads"`
	Frame    int    `json:"frame"`
	Function string `json:"function,omitempty"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	// URI is the culprit's local file, when it resolves to one.
	URI      string `json:"uri,omitempty"`
	Problems int    `json:"problems"`
	// Unresolved lists frame files that resolve to no local file.
	Unresolved []string `json:"unresolved,omitempty"`
	// Kernel is the faulting GPU kernel of a GPU crash. When no host frame
	// of the culprit has a local file, Function, File, Line and URI name
	// the innermost inline level of the fault instead, and Frame is -1.
	Kernel string `json:"kernel,omitempty"`
}

// openDump loads args as the shown dump, reporting $/progress on token
// (or on a server-created token when the client supports it), publishing
// the crashing thread's diagnostics as soon as it is unwound, then all of
// them. A failure is shown with window/showMessage and returned; the
// previous dump, if any, stays shown.
func (s *Server) openDump(ctx context.Context, args OpenArgs, token protocol.ProgressToken) (*OpenSummary, error) {
	sum, err := s.load(ctx, args, token)
	if err != nil && !errors.Is(err, context.Canceled) {
		s.showMessage(protocol.MessageTypeError, "faultline: "+err.Error())
	}
	return sum, err
}

// errSuperseded is the cause of a load cancelled by a later faultline.open:
// the latest open wins, and nothing of an earlier one is published after it.
var errSuperseded = errors.New("a later faultline.open replaced this one")

// supersede makes the load with cancel the latest one, cancelling the load
// in progress, if any, and returns its sequence number.
func (s *Server) supersede(cancel context.CancelCauseFunc) uint64 {
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancelOpen != nil {
		s.cancelOpen(errSuperseded)
	}
	s.openSeq++
	s.cancelOpen = cancel
	return s.openSeq
}

// latest runs f, holding pubMu, when the load seq is the latest one and
// ctx is not cancelled, and reports whether it did: what a load publishes
// goes through it, so that a superseded load never publishes after the
// load that replaced it.
func (s *Server) latest(ctx context.Context, seq uint64, f func()) bool {
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	s.mu.Lock()
	ok := seq == s.openSeq && ctx.Err() == nil
	s.mu.Unlock()
	if ok {
		f()
	}
	return ok
}

func (s *Server) load(ctx context.Context, args OpenArgs, token protocol.ProgressToken) (*OpenSummary, error) {
	settings, err := s.checkOpenArgs(&args)
	if err != nil {
		return nil, err
	}
	ctx, cancelCause := context.WithCancelCause(ctx)
	cancel := func() { cancelCause(context.Canceled) }
	defer cancel()
	seq := s.supersede(cancelCause)
	prog := s.beginProgress(ctx, token, "faultline: opening "+filepath.Base(args.Dump), cancel)
	defer prog.end("")

	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	if ctx.Err() != nil {
		return nil, canceled(ctx)
	}
	sess, err := s.openSession(ctx, seq, args, s.loadOptions(ctx, seq, args, settings, prog))
	if err != nil {
		return nil, err
	}
	s.fetchDebuginfodSources(ctx, prog, sess.Crash)
	l := &loaded{seq: seq, args: args, session: sess}
	var old *loaded
	if !s.latest(ctx, seq, func() {
		s.mu.Lock()
		old = s.cur
		l.view = newView(sess.Crash, l, 0, s.res, s.valuesFor(sess))
		s.cur = l
		s.loading = nil
		s.mu.Unlock()
		s.publish(l.view)
		s.refresh()
	}) {
		sess.Close()
		s.abandon(ctx, seq)
		return nil, canceled(ctx)
	}
	old.close()
	if sess.Pooled() {
		s.pool.Trim(s.log)
	}

	sum := summarize(l.view)
	s.noteUnresolved(l.view)
	if msg := truncationMessage(l.view.crash); msg != "" {
		s.showMessage(protocol.MessageTypeWarning, msg)
	}
	prog.end(sum.Summary)
	s.log.Info("opened dump", zap.String("dump", args.Dump), zap.String("summary", sum.Summary))
	return sum, nil
}

// checkOpenArgs makes the paths of faultline.open's arguments absolute and
// checks that they name a regular dump file, an executable and a sysroot
// directory; it returns the settings the load uses.
func (s *Server) checkOpenArgs(args *OpenArgs) (Settings, error) {
	if args.Dump == "" {
		return Settings{}, errors.New(`faultline.open needs {"dump": path}`)
	}
	s.mu.Lock()
	args.Dump = s.absPath(args.Dump)
	if args.Exe != "" {
		args.Exe = s.absPath(args.Exe)
	}
	if args.Sysroot != "" {
		args.Sysroot = s.absPath(args.Sysroot)
	}
	settings := s.settings
	s.mu.Unlock()

	if fi, err := os.Stat(args.Dump); err != nil {
		return settings, fmt.Errorf("cannot read dump: %w", err)
	} else if fi.IsDir() && !analysis.IsProblemDirectory(args.Dump) {
		return settings, fmt.Errorf("%s is a directory, not a dump (nor an ABRT problem directory)", args.Dump)
	} else if !fi.Mode().IsRegular() && !fi.IsDir() {
		// Opening a FIFO blocks until someone writes to it, and a device
		// never ends: the language server opens regular files only.
		return settings, fmt.Errorf("%s is not a regular file (%s); the language server opens dump files only", args.Dump, fileKind(fi.Mode()))
	}
	if args.Exe != "" && !isFile(args.Exe) {
		return settings, fmt.Errorf("executable %s does not exist (the \"exe\" argument of faultline.open)", args.Exe)
	}
	if args.Sysroot != "" {
		if fi, err := os.Stat(args.Sysroot); err != nil || !fi.IsDir() {
			return settings, fmt.Errorf("sysroot %s is not a directory", args.Sysroot)
		}
	}
	return settings, nil
}

// loadOptions are the analysis options of load seq: its progress, and the
// crashing thread published as soon as it is unwound.
func (s *Server) loadOptions(ctx context.Context, seq uint64, args OpenArgs, settings Settings, prog *progress) analysis.Options {
	return analysis.Options{
		Exe:       args.Exe,
		Sysroot:   args.Sysroot,
		DebugDirs: settings.DebugDirs,
		// "offline": no debuginfod (the source fetch after opening reads
		// the same setting through the resolver).
		Offline: settings.Offline,
		Progress: func(msg string, done, total int) {
			prog.report(msg, done, total)
		},
		OnCrashingThread: func(partial *analysis.Crash) {
			s.latest(ctx, seq, func() {
				s.mu.Lock()
				v := newView(partial, nil, 0, s.res, nil)
				s.loading = v
				s.mu.Unlock()
				s.publish(v)
				s.refresh() // lenses of the crashing thread come from s.loading
			})
		},
	}
}

// openSession opens the dump in a goroutine of its own (analysis cannot be
// interrupted, and a panic there becomes an error) and returns its session,
// or an error as soon as ctx is cancelled.
func (s *Server) openSession(ctx context.Context, seq uint64, args OpenArgs, opts analysis.Options) (*analysis.Session, error) {
	type result struct {
		sess *analysis.Session
		err  error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("panic while opening a dump", zap.String("dump", args.Dump), zap.Any("panic", p))
				done <- result{err: fmt.Errorf("internal error while reading %s: %v", args.Dump, p)}
			}
		}()
		sess, err := s.pool.Open(args.Dump, opts)
		done <- result{sess, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		// analysis cannot be interrupted; drop its result when it comes.
		go func() {
			if r := <-done; r.sess != nil {
				r.sess.Close()
			}
		}()
		s.abandon(ctx, seq)
		return nil, canceled(ctx)
	}
	if r.err != nil {
		s.abandon(ctx, seq)
		return nil, r.err
	}
	return r.sess, nil
}

func (s *Server) valuesFor(sess *analysis.Session) ValueReader {
	if s.opts.Values == nil || sess == nil {
		return nil
	}
	return s.opts.Values(sess)
}

// absPath makes p absolute against the first workspace folder. s.mu is held.
func (s *Server) absPath(p string) string {
	p = expandHome(p)
	if filepath.IsAbs(p) || len(s.folders) == 0 {
		return abs(p)
	}
	return filepath.Join(s.folders[0], p)
}

// closeDump forgets the shown dump and clears its diagnostics.
func (s *Server) closeDump() bool {
	s.mu.Lock()
	old := s.cur
	s.cur = nil
	s.mu.Unlock()
	old.close()
	s.publish(nil)
	s.refresh()
	return old != nil
}

// abandon ends load seq that failed or was cancelled: unless a later load
// replaced it, the current dump's diagnostics are shown again (the load may
// have published its crashing thread).
func (s *Server) abandon(ctx context.Context, seq uint64) {
	s.latest(context.WithoutCancel(ctx), seq, func() {
		s.mu.Lock()
		s.loading = nil
		s.mu.Unlock()
		s.republishCurrent()
	})
}

// canceled is the error of a load whose ctx was cancelled: by the user
// (window/workDoneProgress/cancel, $/cancelRequest) or by a later open.
func canceled(ctx context.Context) error {
	if cause := context.Cause(ctx); errors.Is(cause, errSuperseded) {
		return fmt.Errorf("%w: %w", context.Canceled, cause)
	}
	return context.Canceled
}

// republishCurrent shows the current dump's diagnostics again (after a
// cancelled or failed load published a partial view).
func (s *Server) republishCurrent() {
	s.mu.Lock()
	var v *view
	if s.cur != nil {
		v = s.cur.view
	}
	s.mu.Unlock()
	s.publish(v)
}

// shown is the view whose diagnostics are published: the crashing thread
// of a load in progress, else the current view (nil when none).
func (s *Server) shown() *view {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loading != nil {
		return s.loading
	}
	if s.cur == nil {
		return nil
	}
	return s.cur.view
}

// current returns the shown view, or nil.
func (s *Server) current() *view {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return nil
	}
	return s.cur.view
}

// rebuild recomputes the view (new thread selection or source settings)
// and republishes. thread 0 keeps the current selection.
func (s *Server) rebuild(thread int) error {
	s.mu.Lock()
	l := s.cur
	if l == nil {
		s.mu.Unlock()
		return errors.New("no dump is open (run faultline.open first)")
	}
	if thread == 0 {
		thread = l.view.thread.ID
	} else if l.view.crash.Thread(thread) == nil {
		s.mu.Unlock()
		return fmt.Errorf("the dump has no thread %d", thread)
	}
	l.view = newView(l.view.crash, l, thread, s.res, l.view.values)
	v := l.view
	s.mu.Unlock()
	s.publish(v)
	s.refresh()
	return nil
}

func summarize(v *view) *OpenSummary {
	c := v.crash
	sum := &OpenSummary{
		Dump:       c.Dump.Path,
		Format:     c.Dump.Format,
		Summary:    crashSummary(v),
		Threads:    len(c.Threads),
		Problems:   len(c.Problems),
		Unresolved: v.unresolved,
		Frame:      -1,
	}
	if c.Signal != nil {
		sum.Signal = c.Signal.Name
	}
	if v.thread != nil {
		sum.Thread = v.thread.ID
	}
	if v.culprit >= 0 && v.culprit < len(v.sites) {
		st := v.sites[v.culprit]
		sum.Frame = st.frame.Index
		sum.Function = st.frame.Function
		sum.File = st.frame.File
		sum.Line = st.frame.Line
		if st.path != "" {
			sum.URI = string(st.uri)
		}
	}
	if g := c.GPU; g != nil {
		sum.Kernel = kernelName(g)
		if sum.URI == "" && len(v.gpu) > 0 {
			gs := v.gpu[0]
			sum.Frame = -1
			sum.Function, sum.File, sum.Line = gs.frame.Function, gs.frame.File, gs.frame.Line
			if gs.path != "" {
				sum.URI = string(gs.uri)
			}
		}
	}
	return sum
}

func marshalAny(v any) (protocol.LSPAny, error) {
	b, err := json.Marshal(v)
	return protocol.LSPAny(b), err
}

// fileKind names the type of a file that is not a regular file.
func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}
