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
rm -rf "${dest:?}"/*
mkdir -p "$dest/apt/lists/partial" "$dest/apt/archives/partial" "$dest/debs" "$dest/root"
: > "$dest/apt/status"
cat > "$dest/apt/$suite.sources" <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
apt_opts=(-o Dir::Etc::sourcelist="$dest/apt/$suite.sources" -o Dir::Etc::sourceparts=/nonexistent
          -o Dir::State::Lists="$dest/apt/lists" -o Dir::Cache::Archives="$dest/apt/archives"
          -o Dir::State::status="$dest/apt/status" -o Debug::NoLocking=1
          -o APT::Update::Post-Invoke= -o DPkg::Lock::Timeout=600)
apt-get "${apt_opts[@]}" update -q >/dev/null
# With an empty dpkg status, the simulated install lists the packages'
# whole dependency closure in trixie, libc6 included. libpython3.13-stdlib
# brings ctypes and threading.
mapfile -t pkgs < <(apt-get "${apt_opts[@]}" -s --no-install-recommends install \
  python3.13-minimal libpython3.13-stdlib | awk '/^Inst /{print $2}')
[ "${#pkgs[@]}" -gt 0 ] || { echo "install-py313.sh: apt found no python3.13 in $suite" >&2; exit 1; }
(cd "$dest/debs" && apt-get "${apt_opts[@]}" download "${pkgs[@]}" >/dev/null)
for deb in "$dest"/debs/*.deb; do dpkg-deb -x "$deb" "$dest/root"; done
rm -rf "$dest/debs" "$dest/apt"
root=$dest/root
loader=
for l in "$root"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$root"/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2; do
  if [ -e "$l" ]; then loader=$l; break; fi
done
[ -n "$loader" ] || { echo "install-py313.sh: no loader in $suite's libc6" >&2; exit 1; }
libs=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu
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
