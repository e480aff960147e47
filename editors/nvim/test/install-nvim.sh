#!/usr/bin/env bash
# Unpacks Neovim from a newer Debian suite into a private folder, with that
# suite's own libc and loader, and writes DEST/nvim, a wrapper that starts it
# through that loader. Nothing is installed system-wide and /etc/apt is not
# touched (apt runs on private lists, caches and an empty dpkg status).
#
#   editors/nvim/test/install-nvim.sh SUITE DEST     # e.g. trixie (0.10.4), forky (0.12.x)
#   DEST/nvim --version
set -euo pipefail
suite=${1:?usage: install-nvim.sh SUITE DEST}
dest=${2:?usage: install-nvim.sh SUITE DEST}
mkdir -p "$dest" && dest=$(cd "$dest" && pwd)
if [ -x "$dest/nvim" ] && "$dest/nvim" --version >/dev/null 2>&1; then
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
# With an empty dpkg status, the simulated install lists neovim's whole
# dependency closure in that suite, libc6 included.
mapfile -t pkgs < <(apt-get "${apt_opts[@]}" -s --no-install-recommends install neovim | awk '/^Inst /{print $2}')
[ "${#pkgs[@]}" -gt 0 ] || { echo "install-nvim.sh: apt found no neovim in $suite" >&2; exit 1; }
(cd "$dest/debs" && apt-get "${apt_opts[@]}" download "${pkgs[@]}" >/dev/null)
for deb in "$dest"/debs/*.deb; do dpkg-deb -x "$deb" "$dest/root"; done
rm -rf "$dest/debs" "$dest/apt"
root=$dest/root
loader=
for l in "$root"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$root"/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2; do
  if [ -e "$l" ]; then loader=$l; break; fi
done
[ -n "$loader" ] || { echo "install-nvim.sh: no loader in $suite's libc6" >&2; exit 1; }
libs=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu
cat > "$dest/nvim" <<WRAP
#!/bin/sh
# Neovim from Debian $suite, started with $suite's own loader and libraries.
export VIMRUNTIME=$root/usr/share/nvim/runtime
exec "$loader" --library-path "$libs" "$root/usr/bin/nvim" "\$@"
WRAP
chmod +x "$dest/nvim"
"$dest/nvim" --version | head -1
