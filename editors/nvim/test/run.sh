#!/usr/bin/env bash
# Runs test.lua headless in each Neovim given, against the real server on
# the real core testdata/native/cores/null_inline.core.gz.
#
#   editors/nvim/test/run.sh FAULTLINE_BIN NVIM...
# Prints one line per check ("ok - nvim 0.10.4: ..."), then
# "nvim: N passed, M failed"; exits non-zero on any failure.
set -uo pipefail
bin=$(readlink -f "${1:?usage: run.sh FAULTLINE_BIN NVIM...}")
shift
here=$(cd "$(dirname "$0")" && pwd)
plugin=$(cd "$here/.." && pwd)
repo=$(cd "$plugin/../.." && pwd)
out=${FAULTLINE_TEST_OUT:-$(mktemp -d)}
mkdir -p "$out"
passed=0 failed=0
n=0
# doc/tags ships with the plugin: it must be what :helptags makes of the doc.
first=$1
case $first in /*) ;; *) first=$PWD/$first ;; esac
tagdir=$(mktemp -d)
cp "$plugin/doc/faultline.txt" "$tagdir/"
"$first" --headless -u NONE -i NONE -c "helptags $tagdir" -c q >/dev/null 2>&1
if cmp -s "$tagdir/tags" "$plugin/doc/tags"; then
  echo "ok - doc/tags is what :helptags makes"; passed=$((passed + 1))
else
  echo "not ok - doc/tags is stale: run nvim --headless -u NONE -c 'helptags editors/nvim/doc' -c q"; failed=$((failed + 1))
fi
rm -rf "$tagdir"
for nvim in "$@"; do
  case $nvim in /*) ;; *) nvim=$PWD/$nvim ;; esac
  n=$((n + 1))
  res=$out/nvim-$n.txt
  : > "$res"
  # filetype on: vim.lsp.enable (0.11+) attaches on FileType, as in a user's setup.
  (cd "$repo/testdata/native" && FAULTLINE_BIN=$bin FAULTLINE_RESULTS=$res FAULTLINE_HTML=$out \
    timeout 180 "$nvim" --headless -u NONE -i NONE --cmd "set rtp^=$plugin" --cmd 'filetype on' \
    -c "luafile $here/test.lua" >"$res.log" 2>&1)
  rc=$?
  ver=$(sed -n 's/^# nvim //p' "$res" | head -1)
  ver=${ver:-$nvim}
  p=$(grep -c '^ok - ' "$res")
  f=$(grep -c '^not ok - ' "$res")
  grep -E '^(not )?ok - ' "$res" | sed -e "s#^ok - #ok - nvim $ver: #" -e "s#^not ok - #not ok - nvim $ver: #"
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "not ok - nvim $ver: exited with status $rc"; tail -5 "$res.log"
    f=1
  fi
  if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
    echo "not ok - nvim $ver: ran no check"; tail -5 "$res.log"
    f=1
  fi
  passed=$((passed + p)) failed=$((failed + f))
done
echo "nvim: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
