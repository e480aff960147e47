// Package debugfile finds the files behind a module: the binary for a
// mapped path and a build-id, its separate debug file by build-id
// (.build-id/xx/rest.debug) or .gnu_debuglink (with the CRC checked) in the
// debug directories, and both from debuginfod servers (with gdb's cache
// layout, negative-cache rules and limits).
//
// Fetching never imports symbolizing: it sees ELF objects only (object), and
// it is the one package of analysis that talks to the network
// (internal/archtest).
package debugfile
