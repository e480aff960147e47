// Package sourcelookup finds the file on this machine that a crash frame's
// source file name (a DWARF name, often relative to the compilation
// directory or under another machine's build prefix) refers to. The
// language server and the debug adapter share it, so an editor shows the
// same file for a frame in diagnostics, lenses, the Call Stack and the
// Disassembly views.
//
// The order is gdb's ("Specifying Source Directories", "set
// substitute-path"): the checkout the sources engine mapped the frame to,
// the sourceMap prefix rules, the compilation directory joined with the
// name (DW_AT_comp_dir), then the workspace folders and the checkout cache
// (the name joined to each root, then the indexed file sharing the longest
// path suffix), and finally debuginfod's /source when a server is
// configured: Resolver.Fetch brings a crash's missing files into the
// debuginfod cache, read-only, and Resolve returns them after every local
// file.
package sourcelookup
