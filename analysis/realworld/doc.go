// Package realworld holds the engine's tests on crashes users bring:
// programs built here the way users build them (gcc and clang, -static,
// LTO, sanitizers, no frame pointers, -nostdlib), signals sent by other
// processes, Debian's own programs (python3, sqlite3, node, OpenJDK, perl,
// gdb), Go programs, and other projects' published cores (elfutils, LLDB).
// Each is compared frame for frame with gdb, or with the other suite's
// stated expectation; README.md lists every core tried and its verdict. It
// has no code of its own.
package realworld
