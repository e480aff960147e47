# Rust symbol names and i386 cores (issue 23 items 5 and 6): Debian's rustc
# builds the programs whose every Rust symbol analysis/rustdemangle is
# compared with binutils' c++filt and gdb; gcc-multilib and g++-multilib
# build the 32-bit (gcc -m32) programs that qemu-i386 (qemu-user) runs and
# crashes into the i386 cores analysis/realworld compares with gdb (kernels
# without IA32 emulation run no 32-bit program themselves).
apt_install rustc binutils gcc-multilib g++-multilib qemu-user
