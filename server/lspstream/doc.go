// Package lspstream is the LSP base-protocol stream the server reads and
// writes (Content-Length framing, LSP 3.17 §"Base Protocol") on
// go.lsp.dev/jsonrpc2's header stream, made tolerant of malformed
// messages: a frame that is not JSON, or not a request, is answered with a
// JSON-RPC error and the connection goes on; broken framing ends it with a
// FramingError.
package lspstream
