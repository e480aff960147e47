#!/usr/bin/env bash
# install.sh installs what the debug-info lookup and aarch64 tests need
# (analysis: TestDebuginfod*, TestSplitDWARF, TestMiniDebugInfo,
# TestAArch64*, TestLinkMapWithoutNTFile, debuginfo's TestSplitDWARFPackage), on Debian bookworm:
#   debuginfod              Debian's debuginfod server (elfutils)
#   qemu-user               qemu-aarch64, which runs the aarch64 programs and writes their cores
#   gcc-aarch64-linux-gnu   the cross compiler (testdata/aarch64/gen.sh)
#   libc6-dev-arm64-cross   the aarch64 glibc, /usr/aarch64-linux-gnu (the cores' libraries)
#   gdb-multiarch           the oracle for aarch64 cores
#   gdb binutils xz-utils gcc util-linux   gdb oracle, objcopy/strip/nm, xz, unshare
#   llvm-14                 llvm-dwp-14, which packs .dwo files into a .dwp (TestSplitDWARFPackage)
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.ci/lib.sh"
apt_install debuginfod qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross gdb-multiarch gdb binutils xz-utils gcc util-linux llvm-14
