# Rust symbol names and i386 cores (issue 23 items 5 and 6): Debian's rustc
# builds the programs whose every Rust symbol analysis/rustdemangle is
# compared with binutils' c++filt and gdb; gcc-multilib and g++-multilib
# build the 32-bit (gcc -m32) programs crashed into the i386 cores that
# analysis/realworld compares with gdb.
apt_install rustc binutils gcc-multilib g++-multilib
