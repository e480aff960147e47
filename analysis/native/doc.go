// Package native reads a native ELF core dump into the crash model: the
// process's modules located from NT_FILE or the dynamic linker's link_map
// (on disk, under a sysroot, by build-id, through debuginfod), every thread
// unwound (CFI, frame pointers, signal frames) and symbolized with its
// inlined levels, the fatal signal and faulting instruction, and the frame
// values an editor shows. It knows nothing of logs, GPU dumps or rendering:
// package analysis dispatches to it and classifies what it returns.
package native
