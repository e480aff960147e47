// Package server is faultline's language server: it opens a crash artifact
// with analysis.OpenSession and shows the crash where developers read code,
// over the Language Server Protocol (LSP 3.17/3.18) on a single stream.
//
// Every request is answered from one precomputed view of the loaded crash
// (see view.go): diagnostics on frame lines, code lenses, hovers with
// registers and disassembly, inlay hints, call hierarchy along the crashing
// stack, workspace symbols, and the custom request "faultline/threads".
//
// One small file per LSP method converts the view to LSP types; the
// connection plumbing (ordering, cancellation, panics, lifecycle) lives in
// conn.go and stream.go. It is the only package that imports go.lsp.dev.
package server
