// Package modulepool is the language server's module pool: the binaries
// and debug files of the dump shown, kept open with their symbol tables,
// decoded units and unwind tables for the next open (analysis.ModulePool),
// one open at a time, retired when an open's options would locate other
// files, trimmed after each open is shown.
package modulepool
