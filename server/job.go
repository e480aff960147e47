package server

import (
	"context"
	"fmt"
	"strings"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/job"
)

// CommandJobReport merges a directory of per-rank summaries (`faultline
// job collect`'s output) and returns the merged report: the call-prefix
// tree for a tree view, the equivalence classes, the signature groups. The
// odd ranks' frames become diagnostics at their source lines.
const CommandJobReport = "faultline.jobReport"

// JobReportArgs is faultline.jobReport's argument.
type JobReportArgs struct {
	Dir string `json:"dir"`
}

func (s *Server) jobReport(_ context.Context, a JobReportArgs) (*job.Report, error) {
	if a.Dir == "" {
		return nil, fmt.Errorf(`%s wants {"dir": DIR}`, CommandJobReport)
	}
	rep, err := job.MergeDir(expandHome(a.Dir))
	if err != nil {
		return nil, err
	}
	diags := s.jobDiagnostics(rep)
	s.mu.Lock()
	for u := range diags {
		s.published[u] = true // cleared by the next dump's publish
	}
	s.mu.Unlock()
	for u, ds := range diags {
		s.sendDiagnostics(u, ds)
	}
	return rep, nil
}

// jobDiagnostics puts each odd class's distinguishing frames on their
// source lines: a Warning on the innermost frame with a source line,
// Information on its callers.
func (s *Server) jobDiagnostics(rep *job.Report) map[uri.URI][]protocol.Diagnostic {
	out := map[uri.URI][]protocol.Diagnostic{}
	largest := ""
	if n := len(rep.Classes); n > 0 {
		largest = rep.Classes[n-1].Ranks
	}
	odd := map[string]bool{}
	for _, r := range rep.OddOnesOut {
		odd[r] = true
	}
	for _, c := range rep.Classes {
		if !odd[c.Ranks] {
			continue
		}
		first := true
		for _, site := range c.Sites {
			if site.File == "" || site.Line <= 0 {
				continue
			}
			p := s.res.Resolve(&analysis.Frame{File: site.File}, "")
			if p == "" {
				continue
			}
			d := protocol.Diagnostic{
				Range:    protocol.Range{Start: protocol.Position{Line: uint32(site.Line - 1)}, End: protocol.Position{Line: uint32(site.Line - 1), Character: 1 << 16}},
				Severity: protocol.DiagnosticSeverityInformation,
				Source:   protocol.NewOptional(diagnosticSource),
				Code:     protocol.String("odd-rank"),
				Message:  protocol.String(fmt.Sprintf("%s: odd one out of %d ranks (the most, ranks %s, are elsewhere); %s called from here", rankWord(c), rep.Ranks, largest, site.Function)),
			}
			if first {
				d.Severity = protocol.DiagnosticSeverityWarning
				msg := fmt.Sprintf("%s stopped here in %s: odd one out of %d ranks (the most, ranks %s, are elsewhere)", rankWord(c), site.Function, rep.Ranks, largest)
				if c.Signature != "" {
					msg += "; crashed: " + c.Signature
				}
				d.Message = protocol.String(msg)
				first = false
			}
			u := uri.File(p)
			out[u] = append(out[u], d)
		}
	}
	return out
}

func rankWord(c job.Class) string {
	if c.Count == 1 {
		return "rank " + c.Ranks
	}
	return "ranks " + strings.TrimSpace(c.Ranks)
}
