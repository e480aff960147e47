#!/usr/bin/env bash
# gen.sh rebuilds the Python crash corpus: the crashmod C extension into
# bin/, and for each CPython on this machine (Debian's /usr/bin/python3.11,
# pyenv's 3.11.7 when present, Debian trixie's 3.13 unpacked privately under
# trixie/ by install-py313.sh) and each crashing job, the job's core
# (cores/NAME.core.gz) and what faulthandler printed about the same crash
# (cores/NAME.faulthandler.txt), plus manifest.json. The faulthandler text is
# the oracle for the Python frames faultline reads from the core.
#
# The 3.13 core maps trixie's python3.13, libc and ctypes from trixie/root;
# its manifest entry names those files relative to this folder (buildIds)
# and the folders a reader searches for them (searchDirs).
#
#   bash gen.sh              rebuild everything
#   bash gen.sh --if-stale   rebuild only if the interpreters' build-ids
#                            differ from the ones in manifest.json
#
# Needs gcc, python3.11 + python3-dev (libpython3.11-dev), readelf, gzip, jq,
# and (once, for trixie/) apt-get and network access to deb.debian.org.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here"

# CPython 3.13 (the _Py_DebugOffsets reader): a no-op when already unpacked.
bash install-py313.sh "$here/trixie" >/dev/null

build_id() { readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p' | head -n1; }

if [ "${1:-}" = "--if-stale" ] || [ "${1:-}" = "--check" ] && [ -f manifest.json ]; then
  stale=$(jq -r '.cases[].buildIds | to_entries[] | "\(.key) \(.value)"' manifest.json | sort -u | bash "$here/../../.ci/stale-buildids.sh")
  if [ -z "$stale" ]; then
    echo "testdata/python: cores match this machine's interpreters"
    exit 0
  fi
  echo "testdata/python: interpreters differ from the cores' ($stale ); regenerating"
  [ "${1:-}" = "--check" ] && exit 3
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One build serves every CPython 3.11 here: the ABI is the same.
mkdir -p bin cores logs
gcc -shared -fPIC -g -O1 -Wall $(python3.11-config --includes) \
  -o bin/crashmod.cpython-311-x86_64-linux-gnu.so src/crashmod.c
# The plain C library flaky.py calls through ctypes (no Python ABI).
gcc -shared -fPIC -g -O1 -Wall -o bin/libchecksum.so src/checksum.c

interpreters=("debian=/usr/bin/python3.11")
if [ -x /root/.pyenv/versions/3.11.7/bin/python3.11 ]; then
  interpreters+=("pyenv=/root/.pyenv/versions/3.11.7/bin/python3.11")
fi
# pyenv's 3.12 and 3.13 when present (the _Py_DebugOffsets reader, like trixie's).
for v in 3.12.1 3.13.0; do
  if [ -x "/root/.pyenv/versions/$v/bin/python${v%.*}" ]; then
    interpreters+=("pyenv${v//./}=/root/.pyenv/versions/$v/bin/python${v%.*}")
  fi
done
interpreters+=("trixie313=trixie/python3.13")

# The files of trixie/root the 3.13 cores map (relative to this folder).
trixie_lib=trixie/root/usr/lib/x86_64-linux-gnu
trixie_files=(trixie/root/usr/bin/python3.13 "$trixie_lib/ld-linux-x86-64.so.2" "$trixie_lib/libc.so.6"
  "$trixie_lib/libffi.so.8" trixie/root/usr/lib/python3.13/lib-dynload/_ctypes.cpython-313-x86_64-linux-gnu.so)
trixie_dirs=(trixie/root/usr/bin "$trixie_lib" trixie/root/usr/lib/python3.13/lib-dynload)

# build_ids TAG PY prints the {path: build-id} object of the files a core
# made by PY depends on.
build_ids() {
  local tag=$1 py=$2 ids lib f
  if [ "$tag" = trixie313 ]; then
    ids='{}'
    for f in "${trixie_files[@]}"; do
      ids=$(jq -n --argjson a "$ids" --arg p "$f" --arg i "$(build_id "$f")" '$a + {($p): $i}')
    done
    echo "$ids"
    return
  fi
  ids=$(jq -n --arg p "$(readlink -f "$py")" --arg i "$(build_id "$py")" '{($p): $i}')
  lib=$(ldd "$py" | awk '/libpython/ {print $3}')
  if [ -n "$lib" ]; then
    ids=$(jq -n --argjson a "$ids" --arg p "$(readlink -f "$lib")" --arg i "$(build_id "$lib")" '$a + {($p): $i}')
  fi
  echo "$ids"
}

crash_line() { grep -n "# CRASH" "$1" | head -n1 | cut -d: -f1; }

cases=()
for entry in "${interpreters[@]}"; do
  tag=${entry%%=*} py=${entry#*=}
  jobs=(crash_ext crash_ctypes)
  dirs='[]'
  # crashmod is built for 3.11 only; ctypes needs no extension of ours.
  case $tag in debian | pyenv) ;; *) jobs=(crash_ctypes) ;; esac
  if [ "$tag" = trixie313 ]; then
    dirs=$(printf '%s\n' "${trixie_dirs[@]}" | jq -R . | jq -s .)
  fi
  for job in "${jobs[@]}"; do
    name="$job.$tag"
    dir="$work/$name"
    mkdir -p "$dir"
    run=$py
    case $py in /*) ;; *) run=$here/$py ;; esac
    (cd "$dir" && ulimit -c unlimited && PYTHONFAULTHANDLER=1 "$run" "$here/$job.py" >/dev/null 2>"$dir/stderr") || true
    [ -s "$dir/core" ] || { echo "$name: no core (is /proc/sys/kernel/core_pattern 'core'?)" >&2; exit 1; }
    gzip -9 -n -c "$dir/core" >"cores/$name.core.gz"
    # Keep faulthandler's report (the shell's "Segmentation fault" line is not ours).
    sed -n '/^Fatal Python error/,$p' "$dir/stderr" >"cores/$name.faulthandler.txt"
    ids=$(build_ids "$tag" "$py")
    cases+=("$(jq -n --arg name "$name" --arg py "$py" --arg script "$job.py" \
      --argjson line "$(crash_line "$job.py")" --argjson ids "$ids" --argjson dirs "$dirs" \
      '{name: $name, interpreter: $py, script: $script, crashLine: $line,
        core: ("cores/" + $name + ".core.gz"), faulthandler: ("cores/" + $name + ".faulthandler.txt"),
        buildIds: $ids} + (if $dirs == [] then {} else {searchDirs: $dirs} end)')")
  done
done
printf '%s\n' "${cases[@]}" | jq -s '{cases: .}' >manifest.json

# Logs: a Python traceback (thread exception + chained main-thread one).
(cd "$work" && /usr/bin/python3.11 "$here/exception.py" >/dev/null 2>"$here/logs/exception.txt") || true
echo "testdata/python: $(jq '.cases | length' manifest.json) cores"
