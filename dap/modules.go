package dap

import (
	"path/filepath"
	"strconv"

	godap "github.com/google/go-dap"
)

// onModules lists the mapped objects with their symbol status (the
// Modules view).
func (s *Server) onModules(r *godap.ModulesRequest) {
	c := s.model.crash
	mods := make([]godap.Module, 0, len(c.Modules))
	for _, m := range c.Modules {
		mods = append(mods, godap.Module{Id: m.Path, Name: filepath.Base(m.Path), Path: m.Path,
			SymbolStatus: m.Symbols, SymbolFilePath: m.DebugFile, AddressRange: m.Start + "-" + m.End})
	}
	resp := &godap.ModulesResponse{Response: response(&r.Request)}
	resp.Body = godap.ModulesResponseBody{Modules: mods, TotalModules: len(mods)}
	s.send(resp)
}

func itoa(n int) string { return strconv.Itoa(n) }

func baseName(p string) string { return filepath.Base(p) }
