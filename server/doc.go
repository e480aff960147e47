// Package server is faultline's language server: it opens a crash artifact
// with analysis.OpenSession and shows the crash where developers read code,
// over the Language Server Protocol (LSP 3.17/3.18) on a single stream.
//
// Every request is answered from one precomputed view of the loaded crash
// (see view.go): diagnostics on frame lines, code lenses, hovers with
// registers and disassembly, inlay hints, call hierarchy along the crashing
// stack, workspace symbols, a document Outline of the threads and frames in
// a file (documentsymbol.go), and the custom requests "faultline/threads"
// (paged like DAP's stackTrace) and "faultline/frameDocument" (the
// read-only faultline-frame: document of a frame without local source,
// framedocument.go).
// A GPU fault adds an Error diagnostic, a lens and a hover at every level
// of the faulting instruction's inline chain (gpu.go).
// faultline.fetchSources checks out the exact revisions with gitsrc and
// moves the view into the checkouts, with lenses and hovers over the
// upstream commits that changed the crashing functions since (sources.go,
// upstream.go); faultline.showCommit opens one commit's patch.
// faultline.jobReport merges a multi-node job's rank summaries (package
// job) and marks the odd ranks' frames as diagnostics (job.go).
//
// One small file per LSP method converts the view to LSP types; the
// connection plumbing (ordering, cancellation, panics, lifecycle) lives in
// conn.go and the stream of server/lspstream; the module pool kept across
// opens in server/modulepool. It and server/lspstream are the only
// packages that import go.lsp.dev.
package server
