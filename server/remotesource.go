package server

import (
	"context"

	"go.uber.org/zap"

	"github.com/faultline-dev/faultline/analysis"
)

// fetchDebuginfodSources is gdb's last source-lookup step for a dump just opened:
// the frame files not on this machine are fetched from debuginfod's
// /source (DEBUGINFOD_URLS, not with "offline") into its cache before the
// view is built, so the diagnostics land on the fetched, read-only copies.
func (s *Server) fetchDebuginfodSources(ctx context.Context, prog *progress, crash *analysis.Crash) {
	s.mu.Lock()
	res := s.res
	s.mu.Unlock()
	prog.report("fetching missing sources from debuginfod", 0, 0)
	n, err := res.Fetch(ctx, crash, localExe(crash))
	if n > 0 || err != nil {
		s.log.Info("debuginfod sources", zap.Int("fetched", n), zap.Error(err))
	}
}
