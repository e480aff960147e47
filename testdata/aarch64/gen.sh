#!/usr/bin/env bash
# gen.sh rebuilds the aarch64 crash corpus: each program cross-compiled with
# Debian's gcc-aarch64-linux-gnu into bin/, run under qemu-user (which writes
# a guest core, qemu_PROG_*.core, in its cwd; such cores have no NT_FILE
# note, so faultline finds the libraries through link_map), its core gzipped
# into cores/NAME.core.gz, and manifest.json recording the cross libc's
# build-ids (the cores can only be symbolized against those libraries). It
# runs from any cwd; everything it writes is rebuilt from scratch.
#
# Needs gcc-aarch64-linux-gnu, libc6-dev-arm64-cross, qemu-user, gzip, jq
# (testdata/debuginfo/install.sh installs them).
#
# Cases:
#   list_crash   SIGSEGV in a qsort callback: an inlined frame, glibc frames
#                without symbols between the callback and main
#   abort_plain  abort() three calls deep, built without return-address signing
#   abort_pac    the same program built with -mbranch-protection=pac-ret and
#                run on qemu's "max" CPU (FEAT_PAuth): every saved return
#                address on the stack carries a pointer-authentication code
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here"
sysroot=/usr/aarch64-linux-gnu

if [ "${1:-}" = "--if-stale" ] || [ "${1:-}" = "--check" ]; then
  stale=$(jq -r '.libraries[] | "\(.path) \(.buildId)"' manifest.json | bash "$here/../../.ci/stale-buildids.sh")
  if [ -z "$stale" ]; then
    echo "testdata/aarch64: cores match this machine's cross libraries"
    exit 0
  fi
  echo "testdata/aarch64: cross libraries differ from the cores' ($stale ); regenerating"
  [ "${1:-}" = "--check" ] && exit 3
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf bin cores
mkdir -p bin cores

# -no-pie: qemu-user leaves the executable's first page (its ELF and program
# headers) out of the core, so gdb cannot relocate a PIE and would be no
# oracle; faultline relocates by AT_ENTRY either way.
cflags=(-g -O1 -no-pie -fno-omit-frame-pointer -fdebug-prefix-map="$here"=.)
build() { # NAME SOURCE [FLAGS...]
  local name=$1 src=$2
  shift 2
  aarch64-linux-gnu-gcc "${cflags[@]}" "$@" -o "bin/$name" "$src"
}
build list_crash list_crash.c
build abort_plain abort_pac.c
build abort_pac abort_pac.c -mbranch-protection=pac-ret

run() { # NAME [QEMU FLAGS...]
  local name=$1 dir="$work/$1" core
  shift
  mkdir -p "$dir"
  (cd "$dir" && ulimit -c unlimited && qemu-aarch64 "$@" -L "$sysroot" "$here/bin/$name" >/dev/null 2>&1) || true
  core=$(ls "$dir"/qemu_"$name"_*.core 2>/dev/null | head -n1)
  [ -n "$core" ] || { echo "gen.sh: $name left no guest core" >&2; exit 1; }
  gzip -9 -n -c "$core" >"cores/$name.core.gz"
  echo "   $name: core $(stat -c %s "$core") bytes, gz $(stat -c %s "cores/$name.core.gz")"
}
run list_crash
run abort_plain
run abort_pac -cpu max

{
  echo '{"sysroot": "'"$sysroot"'", "libraries": ['
  sep=""
  for lib in lib/ld-linux-aarch64.so.1 lib/libc.so.6; do
    id=$(readelf -n "$sysroot/$lib" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p' | head -n1)
    printf '%s  {"path": "%s", "buildId": "%s"}' "$sep" "$sysroot/$lib" "$id"
    sep=$',\n'
  done
  printf '\n]}\n'
} | jq . >manifest.json
