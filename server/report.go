package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/faultline-dev/faultline/analysis/report"
)

// writeReport writes the shown crash as markdown (the summary, the culprit
// line, then the terminal report) under cacheDir/reports (by default the user's
// cache directory) and opens it with window/showDocument.
func (s *Server) writeReport(ctx context.Context) (string, error) {
	v := s.current()
	if v == nil {
		return "", errors.New("no dump is open")
	}
	s.mu.Lock()
	dir := s.settings.CacheDir
	canShow := s.caps.showDocument
	s.mu.Unlock()
	if dir == "" {
		dir = defaultCacheDir()
	}
	dir = filepath.Join(expandHome(dir), "reports")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n", crashSummary(v))
	fmt.Fprintf(&b, "Dump: `%s` (%s, %s)\n\n", v.crash.Dump.Path, v.crash.Dump.Format, v.crash.Dump.Arch)
	if v.culprit >= 0 && v.culprit < len(v.sites) {
		st := v.sites[v.culprit]
		if st.path != "" {
			if text := v.files[st.path].line(int(st.line)); text != nil {
				fmt.Fprintf(&b, "[%s:%d](%s)\n\n```%s\n%s\n```\n\n", st.frame.File, st.frame.Line, st.uri,
					fenceLanguage(st.path), strings.TrimRight(string(text), " \t"))
			}
		}
	}
	// The same report `faultline analyze` prints (seed 000's structure).
	if err := report.Markdown(&b, v.crash, ""); err != nil {
		return "", err
	}
	name := strings.TrimSuffix(filepath.Base(v.crash.Dump.Path), ".gz") + ".md"
	path := filepath.Join(dir, name)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", err
	}
	if canShow {
		yes := true
		if _, err := s.client.ShowDocument(ctx, &protocol.ShowDocumentParams{URI: uri.File(path), TakeFocus: &yes}); err != nil {
			return path, fmt.Errorf("report written to %s, but window/showDocument failed: %w", path, err)
		}
	}
	return path, nil
}

// defaultCacheDir is the user's cache directory for faultline.
func defaultCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "faultline")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("faultline-%d", os.Getuid()))
}

// fenceLanguage names a source file's language for a markdown code fence.
func fenceLanguage(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".c", ".h":
		return "c"
	case ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".cu", ".cuh":
		return "cpp"
	case ".rs":
		return "rust"
	case ".go":
		return "go"
	case ".py":
		return "python"
	}
	return ""
}
