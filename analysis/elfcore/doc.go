// Package elfcore reads Linux ELF core dumps: the ELF header and program
// headers of the core, its notes (NT_PRSTATUS, NT_PRPSINFO, NT_SIGINFO,
// NT_AUXV, NT_FILE, NT_PRFPREG, NT_X86_XSTATE and the other per-thread
// register sets) and the process memory dumped in its PT_LOAD segments.
//
// The core is memory-mapped read-only and never read into memory whole;
// compressed cores are first stream-decompressed into a temporary file by
// package input. Every read of the file is bounds-checked and every
// allocation sized from file data is capped, so a truncated or corrupt core
// opens with a partial result and a list of Problems rather than failing or
// panicking. Only fatal conditions (not ELF, not ET_CORE, an unsupported
// machine) are reported as a *FormatError.
//
// References: System V ABI (gABI) chapter 4 "Object Files" and chapter 5
// "Program Loading" (ELF header, program header, note section layout);
// linux/include/uapi/linux/elfcore.h, linux/include/linux/elfcore.h and
// linux/fs/binfmt_elf.c (note contents and the order the kernel writes them);
// glibc sys/procfs.h; linux/include/uapi/asm-generic/siginfo.h.
//
// x86-64 and AArch64 cores are supported. A Core is safe for concurrent
// readers once Open has returned; byte slices it hands out stay valid until
// Close.
package elfcore
