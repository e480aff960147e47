package server

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/faultline-dev/faultline/analysis"
)

// systemLibDirs are where a distribution installs its shared libraries:
// a frame in a module under one of them is a system library's (glibc's
// exit.c), whose sources a machine rarely has.
var systemLibDirs = []string{"/lib/", "/lib64/", "/lib32/", "/usr/lib/", "/usr/lib64/", "/usr/lib32/", "/usr/libexec/"}

// isSystemModule reports whether module (a path as the dump recorded it)
// is a system library.
func isSystemModule(module string) bool {
	for _, d := range systemLibDirs {
		if strings.HasPrefix(module, d) {
			return true
		}
	}
	return false
}

// noteSystemFile records fr's file, which resolves nowhere, when fr is a
// system library's frame.
func (v *view) noteSystemFile(fr *analysis.Frame) {
	if !isSystemModule(fr.Module) {
		return
	}
	if v.systemFiles == nil {
		v.systemFiles = map[string]string{}
	}
	v.systemFiles[fr.File] = fr.Module
}

// noteUnresolved tells the user about v's frame files that are not on this
// machine: the program's own with a Warning at every open (the user can
// map or fetch them), the system libraries' with one Information per
// session saying how to get them (their frames show disassembly meanwhile).
func (s *Server) noteUnresolved(v *view) {
	var own []string
	for _, f := range v.unresolved {
		if _, sys := v.systemFiles[f]; !sys {
			own = append(own, f)
		}
	}
	if len(own) > 0 {
		s.showMessage(protocol.MessageTypeWarning, unresolvedMessage(v, own))
	}
	if len(v.systemFiles) == 0 {
		return
	}
	s.mu.Lock()
	said := s.systemSourcesNoted
	s.systemSourcesNoted = true
	offline := s.settings.Offline
	s.mu.Unlock()
	if !said {
		s.showMessage(protocol.MessageTypeInfo, systemSourcesMessage(v.systemFiles, offline))
	}
}

// maxNotedFiles is how many file names of one library the note lists.
const maxNotedFiles = 5

// systemSourcesMessage says which system libraries' sources are missing
// and the two ways to get them: debuginfod's /source, or the
// distribution's source package opened as a workspace folder.
func systemSourcesMessage(files map[string]string, offline bool) string {
	byModule := map[string][]string{}
	for f, m := range files {
		byModule[m] = append(byModule[m], filepath.Base(f))
	}
	mods := make([]string, 0, len(byModule))
	for m := range byModule {
		mods = append(mods, m)
	}
	sort.Strings(mods)
	var libs []string
	for _, m := range mods {
		names := byModule[m]
		sort.Strings(names)
		if len(names) > maxNotedFiles {
			names = append(names[:maxNotedFiles], fmt.Sprintf("… (+%d)", len(byModule[m])-maxNotedFiles))
		}
		libs = append(libs, fmt.Sprintf("%s (%s)", filepath.Base(m), strings.Join(names, ", ")))
	}
	fetch := "set DEBUGINFOD_URLS (e.g. https://debuginfod.debian.net) and faultline fetches them from debuginfod's /source"
	if offline {
		fetch = `turn "offline" off and set DEBUGINFOD_URLS (e.g. https://debuginfod.debian.net): faultline then fetches them from debuginfod's /source`
	}
	return fmt.Sprintf("faultline: the sources of %s are not on this machine, so their frames show disassembly. "+
		"To see them: %s, or run `apt source PACKAGE` (PACKAGE: `dpkg -S %s`) and open its directory as a workspace folder. "+
		"(Said once per session.)", strings.Join(libs, ", "), fetch, mods[0])
}
