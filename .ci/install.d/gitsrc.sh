# What gitsrc's identification tests build and read: a program linked with
# Debian's zlib, libcurl, expat and libstdc++ (their -dev packages; the runtime
# packages' dpkg entries, copyright and changelog files are what the
# inventory reads), objdump (binutils) as the symbol-version oracle, clang
# for DWARF 5 line tables with per-file MD5s, rpm and rpmbuild for an rpm
# database to query.
apt_install gcc g++ gdb binutils clang zlib1g-dev libcurl4-openssl-dev libexpat1-dev git rpm
