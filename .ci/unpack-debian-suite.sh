#!/usr/bin/env bash
# Unpacks packages from another Debian suite, with their whole dependency
# closure (that suite's libc and loader included), into DEST/root, and writes
# DEST/env.sh defining root, loader and libs for a wrapper that starts a
# program through that suite's own loader. Nothing is installed system-wide
# and /etc/apt is not touched: apt runs on private lists, caches and an empty
# dpkg status.
#
#   .ci/unpack-debian-suite.sh SUITE DEST PACKAGE...
#   . DEST/env.sh; exec "$loader" --library-path "$libs" "$root/usr/bin/PROG" ...
set -euo pipefail
suite=${1:?usage: unpack-debian-suite.sh SUITE DEST PACKAGE...}
dest=${2:?usage: unpack-debian-suite.sh SUITE DEST PACKAGE...}
shift 2
[ $# -gt 0 ] || { echo "unpack-debian-suite.sh: no packages named" >&2; exit 2; }
mkdir -p "$dest" && dest=$(cd "$dest" && pwd)
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
# whole dependency closure in that suite, libc6 included.
mapfile -t pkgs < <(apt-get "${apt_opts[@]}" -s --no-install-recommends install "$@" | awk '/^Inst /{print $2}')
[ "${#pkgs[@]}" -gt 0 ] || { echo "unpack-debian-suite.sh: apt found none of $* in $suite" >&2; exit 1; }
(cd "$dest/debs" && apt-get "${apt_opts[@]}" download "${pkgs[@]}" >/dev/null)
for deb in "$dest"/debs/*.deb; do dpkg-deb -x "$deb" "$dest/root"; done
rm -rf "$dest/debs" "$dest/apt"
root=$dest/root
loader=
for l in "$root"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$root"/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2; do
  if [ -e "$l" ]; then loader=$l; break; fi
done
[ -n "$loader" ] || { echo "unpack-debian-suite.sh: no loader in $suite's libc6" >&2; exit 1; }
cat > "$dest/env.sh" <<ENV
root=$root
loader=$loader
libs=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu
ENV
