# What the end-to-end tests of the command line (package e2e) run beside the
# faultline binary: gcc builds their programs; gdb reads the cores
# `faultline hang` writes; readelf/objcopy/strip (binutils) make the stripped
# program and its debug directory; python3 runs the Python jobs; prlimit
# (util-linux) turns cores off for one job; gzip/xz/lz4/zstd compress cores;
# git serves the sources example's repository.
apt_install gcc gdb binutils python3 util-linux gzip xz-utils lz4 zstd git
