// Package cuda reads NVIDIA GPU code and GPU crash state without NVIDIA's
// tools: cubins (EM_CUDA ELF images that debug/elf refuses, relocated or
// not, alone or embedded in a host binary's fatbin), their line tables
// with NVIDIA's inline extensions, and GPU core dumps (.nvcudmp).
//
// Line tables. -lineinfo cubins have no .debug_info: inline chains live in
// .debug_line (DWARF 2) as two vendor extended opcodes, as elfutils
// (libdw) and cuda-gdb decode them: 0x90 DW_LNE_NVIDIA_inlined_call
// (ULEB128 context: the 1-based row of the call site within the current
// sequence, 0 for the outermost function; ULEB128 .debug_str offset of the
// inlined function's linkage name) and 0x91 DW_LNE_NVIDIA_set_function_name,
// plus a 4-byte .debug_str base after the file table that offsets the
// names of the unit. The chain at an address is the last row at or before
// it in the sequence covering it, then the row its context names, and so
// on to a row with context 0, whose function is the enclosing symbol.
//
// Where the data and nvdisasm 11.8 disagree, the data decides (the
// reference cubins in testdata/cuda show each case; the tests check them):
//
//   - Duplicate rows. ptxas 11.8 for sm_90 writes some rows twice
//     (identical, "advance line by 0; copy") and numbers contexts as if they
//     were one row; nvdisasm counts both, so its chains after them skip a
//     level and cite the wrong call line. Identical consecutive rows count
//     once here; the source confirms it (the call site then spells the
//     callee's name).
//   - Name base. nvlink 11.8 leaves the .debug_str base of the second and
//     later units at 0 when linking sm_90 objects (it drops their RELA
//     relocation), so names land inside the first unit's strings. A base
//     is repaired when the recorded one puts names mid-string and another
//     puts every name on a string start (a Problem says so).
//   - Orphan sequences. nvlink keeps the line sequence of a function it
//     dropped as unused, with no relocation: it describes no section and
//     is skipped rather than laid over the code at address 0.
//   - Stale file register. ptxas 11.8 (sm_90) sometimes omits a
//     DW_LNS_set_file after inlined header rows, so a few outer levels name
//     the header instead of the .cu file. Nothing in the table says which
//     file was meant; these rows are shown as written, like nvdisasm and
//     eu-readelf do.
//
// GPU core dumps follow NVIDIA's public cudacoredump.h (cuda-gdb's
// libcudacore): table sections linked by sh_link/sh_info, rows stepped by
// sh_entsize so rows that newer drivers grew, or older ones lacked fields
// of, read correctly (missing fields are zero). The table tree is checked
// first, with the verdicts of LLDB's nvgpu-core reader on its artificial
// cores: a table or leaf whose sh_link names no table, a table of the
// wrong kind or a row it lacks, a container table with sh_entsize 0, or a
// device table with no SM below it refuses the dump (HierarchyError); a
// leaf running past the end of the file is skipped; a CTA whose grid has
// no row keeps its lanes' state.
//
// Threads are LLDB's (see Threads, which cites the test of each rule):
// valid lanes with a per-lane leaf; a lane's exception is its own, else
// its SM's when its warp's errorPC is valid; an SM whose warps all exited
// but whose row (driver r555+) records an exception stands in as "device
// D SM S (no kernel context)" with its errorPC as the only frame. The
// crash model describes the thread LLDB selects, lists the threads, and
// aggregates them as LLDB's `thread list` does. faultline differs from
// LLDB where a dump has no per-lane leaf at all (every valid lane is a
// thread), where no thread has a stop reason but an SM records an
// exception (the exception is named, with a note), and in the faulting
// thread's frames, which are the inline chain at the errorPC (the
// faulting instruction) rather than at the lane's pc.
package cuda
