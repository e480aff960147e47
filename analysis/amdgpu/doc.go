// Package amdgpu reads AMD GPU code objects without ROCm: EM_AMDGPU ELF
// images (gfx90a, gfx942, gfx1100, ...) and the containers HIP ships them
// in, and resolves device addresses to full inline chains.
//
// Containers. hipcc/clang put each translation unit's device code into a
// clang offload bundle ("__CLANG_OFFLOAD_BUNDLE__": a table of entries
// named "hipv4-amdgcn-amd-amdhsa--gfx90a" and the like, one of them an
// empty host entry) in the host object's .hip_fatbin section; a linked
// executable or shared library concatenates them, each aligned to 4096.
// ROCm 6 compresses bundles ("CCOB" header, zlib or zstd). ROCm's own
// libraries ship the same bundles or bare code objects as files (.co,
// .hsaco). Extract finds code objects in all of these.
//
// Line information. Code objects carry standard DWARF 5 (.debug_info with
// DW_TAG_inlined_subroutine, .debug_line), so chains come from
// analysis/debuginfo/symbolize, the reader the host frames use, except that the
// innermost level's line is LLVM's reading of the line table (a line-0
// row stays line 0, where gdb shows the line before); the oracle is
// llvm-symbolizer --inlining on the same objects (testdata/amdgpu).
package amdgpu
