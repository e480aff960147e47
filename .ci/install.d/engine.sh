# Engine tests on programs built as users build them and on Debian's own
# programs (analysis/realworld): clang links the sanitizer runtimes the ASan
# tests need; sqlite3 and nodejs are crashed and killed there (gcc, g++,
# gdb and python3 come from .ci/test's base list).
apt_install clang sqlite3 nodejs
