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
bash "$(dirname "${BASH_SOURCE[0]}")/../../../.ci/unpack-debian-suite.sh" "$suite" "$dest" neovim
. "$dest/env.sh"
cat > "$dest/nvim" <<WRAP
#!/bin/sh
# Neovim from Debian $suite, started with $suite's own loader and libraries.
export VIMRUNTIME=$root/usr/share/nvim/runtime
exec "$loader" --library-path "$libs" "$root/usr/bin/nvim" "\$@"
WRAP
chmod +x "$dest/nvim"
"$dest/nvim" --version | head -1
