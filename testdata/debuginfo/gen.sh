#!/usr/bin/env bash
# gen.sh rebuilds the debug-info lookup corpus from layers.c: the program
# built four ways, a core of each crashing build, and manifest.json with the
# system libraries' build-ids (the cores only symbolize against those). It
# runs from any cwd; everything it writes is rebuilt from scratch.
#
#   bin/plain/layers      -g, not stripped: the reference
#   bin/stripped/layers   stripped (no .symtab, no DWARF, no debuglink); its
#   debug/layers.debug    debug file (objcopy --only-keep-debug), which the
#                         tests serve with debuginfod; cores/stripped.core.gz
#                         maps it from a directory that no longer exists, so
#                         the executable itself must come from debuginfod too
#   bin/split/layers      -gsplit-dwarf: skeleton units in the binary, the
#   bin/split/layers.dwo  DWARF in the .dwo; cores/split.core.gz
#   bin/mini/layers       MiniDebugInfo as Fedora builds it (find-debuginfo):
#                         stripped, with an xz-compressed ELF holding only
#                         the function symbols .dynsym lacks as
#                         .gnu_debugdata; cores/mini.core.gz
#
# Needs gcc, objcopy, strip, nm (binutils), xz, gzip, readelf, jq, and
# /proc/sys/kernel/core_pattern = core (as testdata/native/gen.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here"
libs=(/lib/x86_64-linux-gnu/libc.so.6 /lib64/ld-linux-x86-64.so.2)

if [ "${1:-}" = "--if-stale" ] || [ "${1:-}" = "--check" ]; then
  stale=$(jq -r '.libraries[] | "\(.path) \(.buildId)"' manifest.json | bash "$here/../../.ci/stale-buildids.sh")
  if [ -z "$stale" ]; then
    echo "testdata/debuginfo: cores match this machine's libraries"
    exit 0
  fi
  echo "testdata/debuginfo: system libraries differ from the cores' ($stale ); regenerating"
  [ "${1:-}" = "--check" ] && exit 3
fi
[ "$(cat /proc/sys/kernel/core_pattern)" = core ] || { echo "gen.sh: needs core_pattern 'core'" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf bin debug cores
mkdir -p bin/plain bin/stripped bin/split bin/mini debug cores

# -O0 keeps the always_inline accessor as its own inlined frame on top.
# Every build compiles layers.c from one scratch directory, so DW_AT_name is
# "layers.c" in each.
cp layers.c "$work/"
(cd "$work" && gcc -g -O0 -o layers.plain layers.c)
cp "$work/layers.plain" bin/plain/layers

strip --strip-all -o bin/stripped/layers bin/plain/layers
objcopy --only-keep-debug bin/plain/layers debug/layers.debug

# Split DWARF: compile and link apart so the .dwo is named layers.dwo.
(cd "$work" && gcc -g -O0 -gsplit-dwarf -c -o layers.o layers.c && gcc -o layers layers.o)
cp "$work/layers" "$work/layers.dwo" bin/split/

# MiniDebugInfo (Fedora's find-debuginfo.sh, add_minidebug): keep the
# function symbols that .dynsym lacks, in an otherwise empty ELF, xz it, and
# add it to the stripped binary as .gnu_debugdata.
m="$work/mini"
mkdir -p "$m"
nm -D bin/plain/layers --format=posix --defined-only | awk '{ print $1 }' | sort >"$m/dynsyms"
nm bin/plain/layers --format=posix --defined-only | awk '{ if ($2 == "T" || $2 == "t" || $2 == "D") print $1 }' | sort >"$m/funcsyms"
comm -13 "$m/dynsyms" "$m/funcsyms" >"$m/keep_symbols"
objcopy --only-keep-debug bin/plain/layers "$m/debug"
objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols="$m/keep_symbols" "$m/debug" "$m/mini_debuginfo"
xz --threads=1 -9 -c "$m/mini_debuginfo" >"$m/mini_debuginfo.xz"
strip --strip-all -R .comment -o "$m/layers" bin/plain/layers
objcopy --add-section .gnu_debugdata="$m/mini_debuginfo.xz" "$m/layers" bin/mini/layers

run() { # NAME BINARY: run a copy of BINARY from a scratch directory
  local dir="$work/run-$1"
  mkdir -p "$dir"
  cp "$2" "$dir/layers"
  [ -f "$(dirname "$2")/layers.dwo" ] && cp "$(dirname "$2")/layers.dwo" "$dir/"
  (cd "$dir" && ulimit -c unlimited && ./layers >/dev/null 2>&1) || true
  [ -s "$dir/core" ] || { echo "gen.sh: $1 left no core" >&2; exit 1; }
  gzip -9 -n -c "$dir/core" >"cores/$1.core.gz"
  rm -rf "$dir"
  echo "   $1: gz $(stat -c %s "cores/$1.core.gz") bytes"
}
run stripped bin/stripped/layers
run split bin/split/layers
run mini bin/mini/layers

{
  echo '{"libraries": ['
  sep=""
  for lib in "${libs[@]}"; do
    id=$(readelf -n "$lib" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p' | head -n1)
    printf '%s  {"path": "%s", "buildId": "%s"}' "$sep" "$lib" "$id"
    sep=$',\n'
  done
  printf '\n]}\n'
} | jq . >manifest.json
