# Rust symbol names and i386 cores (issue 23 items 5 and 6): Debian's rustc
# builds the programs whose every Rust symbol analysis/rustdemangle is
# compared with binutils' c++filt and gdb; gcc-12-multilib and
# g++-12-multilib build the 32-bit (gcc -m32) programs that qemu-i386
# (qemu-user) runs and crashes into the i386 cores analysis/realworld
# compares with gdb (kernels without IA32 emulation run no 32-bit program
# themselves). Not the unversioned gcc-multilib/g++-multilib: Debian makes
# them conflict with gcc-aarch64-linux-gnu (testdata/debuginfo/install.sh),
# so each test command removed and reinstalled the other, and the aarch64
# cross compiler was gone when the corpora were checked.
apt_install rustc binutils gcc-12-multilib g++-12-multilib qemu-user
