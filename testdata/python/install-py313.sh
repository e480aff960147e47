#!/usr/bin/env bash
# Unpacks CPython 3.13 from Debian trixie into a private folder, with
# trixie's own libc and loader, and writes DEST/python3.13, a wrapper that
# starts it through that loader. Nothing is installed system-wide and
# /etc/apt is not touched: apt runs on private lists, caches and an empty
# dpkg status (the pattern of editors/nvim/test/install-nvim.sh). The 3.13
# core in cores/ was made with this interpreter, and reading it needs the
# same libpython3.13 and libc (the core names them under DEST/root).
#
#   testdata/python/install-py313.sh [DEST]    # DEST defaults to testdata/python/trixie
#   DEST/python3.13 -c 'import sys; print(sys.version)'
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dest=${1:-$here/trixie}
suite=trixie
mkdir -p "$dest" && dest=$(cd "$dest" && pwd)
if [ -x "$dest/python3.13" ] && "$dest/python3.13" -c pass >/dev/null 2>&1; then
  exit 0
fi
# libpython3.13-stdlib brings ctypes and threading.
bash "$here/../../.ci/unpack-debian-suite.sh" "$suite" "$dest" python3.13-minimal libpython3.13-stdlib
. "$dest/env.sh"
# PYTHONHOME points the interpreter at trixie's stdlib (sys.executable is
# the loader, so CPython cannot find its prefix by itself).
cat > "$dest/python3.13" <<WRAP
#!/bin/sh
# CPython 3.13 from Debian $suite, started with $suite's own loader and libraries.
export PYTHONHOME=$root/usr
exec "$loader" --library-path "$libs" "$root/usr/bin/python3.13" "\$@"
WRAP
chmod +x "$dest/python3.13"
"$dest/python3.13" -c 'import sys; print(sys.version)'
