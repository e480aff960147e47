package server_test

import (
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/faultline-dev/faultline/server"
)

// TestSystemSourcesNotedOncePerSession: a crash through glibc (an assert,
// with libc6-dbg installed and glibc's sources not) says once per session,
// as Information, that libc's sources are not here and how to get them
// (debuginfod's /source, apt source); opening it again, or another crash
// through glibc, says nothing more, and no Warning is about glibc's files.
func TestSystemSourcesNotedOncePerSession(t *testing.T) {
	e := newEnv(t, map[string]any{"offline": true}, server.Options{})
	for _, core := range []string{"assert_abort", "assert_abort", "static_dtor"} {
		e.OpenDump(core)
	}
	e.Client.mu.Lock()
	msgs := append([]protocol.ShowMessageParams(nil), e.Client.messages...)
	e.Client.mu.Unlock()
	var notes []string
	for _, m := range msgs {
		switch {
		case strings.Contains(m.Message, "libc.so.6"):
			if m.Type != protocol.MessageTypeInfo {
				t.Errorf("a %v about glibc's sources: %q", m.Type, m.Message)
			}
			notes = append(notes, m.Message)
		case m.Type == protocol.MessageTypeWarning && strings.Contains(m.Message, "not on this machine"):
			t.Errorf("a Warning about missing sources: %q", m.Message)
		}
	}
	if len(notes) != 1 {
		t.Fatalf("%d notes about glibc's sources in 3 opens, want 1: %q", len(notes), notes)
	}
	for _, want := range []string{"libc.so.6 (", "abort.c", "debuginfod's /source", "apt source", "dpkg -S /", `turn "offline" off`} {
		if !strings.Contains(notes[0], want) {
			t.Errorf("the note lacks %q: %s", want, notes[0])
		}
	}
}
