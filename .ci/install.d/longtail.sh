# Issue 23's long tail of debug-info shapes and languages, each program
# built and crashed into a real core by its test (analysis/realworld) and
# compared with gdb: split DWARF packed into .dwp files (binutils' dwp comes
# with the base list; llvm-dwp-14 is in llvm-14), dwz multifiles (dwz),
# Debian's rustc (1.63; not a rustup toolchain) and gfortran.
apt_install llvm-14 dwz rustc gfortran
