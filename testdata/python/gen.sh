#!/usr/bin/env bash
# gen.sh rebuilds the Python crash corpus: the crashmod C extension into
# bin/, and for each CPython on this machine (Debian's /usr/bin/python3.11,
# pyenv's 3.11.7 when present) and each crashing job, the job's core
# (cores/NAME.core.gz) and what faulthandler printed about the same crash
# (cores/NAME.faulthandler.txt), plus manifest.json. The faulthandler text is
# the oracle for the Python frames faultline reads from the core.
#
#   bash gen.sh              rebuild everything
#   bash gen.sh --if-stale   rebuild only if the interpreters' build-ids
#                            differ from the ones in manifest.json
#
# Needs gcc, python3.11 + python3-dev (libpython3.11-dev), readelf, gzip, jq.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here"

build_id() { readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p' | head -n1; }

if [ "${1:-}" = "--if-stale" ] && [ -f manifest.json ]; then
  stale=""
  while read -r path id; do
    [ "$(build_id "$path")" = "$id" ] || stale="$stale $path"
  done < <(jq -r '.cases[].buildIds | to_entries[] | "\(.key) \(.value)"' manifest.json | sort -u)
  if [ -z "$stale" ]; then
    echo "testdata/python: cores match this machine's interpreters"
    exit 0
  fi
  echo "testdata/python: interpreters differ from the cores' ($stale ); regenerating"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One build serves every CPython 3.11 here: the ABI is the same.
mkdir -p bin cores logs
gcc -shared -fPIC -g -O1 -Wall $(python3.11-config --includes) \
  -o bin/crashmod.cpython-311-x86_64-linux-gnu.so src/crashmod.c

interpreters=("debian=/usr/bin/python3.11")
if [ -x /root/.pyenv/versions/3.11.7/bin/python3.11 ]; then
  interpreters+=("pyenv=/root/.pyenv/versions/3.11.7/bin/python3.11")
fi

crash_line() { grep -n "# CRASH" "$1" | head -n1 | cut -d: -f1; }

cases=()
for entry in "${interpreters[@]}"; do
  tag=${entry%%=*} py=${entry#*=}
  for job in crash_ext crash_ctypes; do
    name="$job.$tag"
    dir="$work/$name"
    mkdir -p "$dir"
    (cd "$dir" && ulimit -c unlimited && PYTHONFAULTHANDLER=1 "$py" "$here/$job.py" >/dev/null 2>"$dir/stderr") || true
    [ -s "$dir/core" ] || { echo "$name: no core (is /proc/sys/kernel/core_pattern 'core'?)" >&2; exit 1; }
    gzip -9 -n -c "$dir/core" >"cores/$name.core.gz"
    # Keep faulthandler's report (the shell's "Segmentation fault" line is not ours).
    sed -n '/^Fatal Python error/,$p' "$dir/stderr" >"cores/$name.faulthandler.txt"
    ids=$(jq -n --arg p "$(readlink -f "$py")" --arg i "$(build_id "$py")" '{($p): $i}')
    lib=$(ldd "$py" | awk '/libpython/ {print $3}')
    if [ -n "$lib" ]; then
      ids=$(jq -n --argjson a "$ids" --arg p "$(readlink -f "$lib")" --arg i "$(build_id "$lib")" '$a + {($p): $i}')
    fi
    cases+=("$(jq -n --arg name "$name" --arg py "$py" --arg script "$job.py" \
      --argjson line "$(crash_line "$job.py")" --argjson ids "$ids" \
      '{name: $name, interpreter: $py, script: $script, crashLine: $line,
        core: ("cores/" + $name + ".core.gz"), faulthandler: ("cores/" + $name + ".faulthandler.txt"),
        buildIds: $ids}')")
  done
done
printf '%s\n' "${cases[@]}" | jq -s '{cases: .}' >manifest.json

# Logs: a Python traceback (thread exception + chained main-thread one).
(cd "$work" && /usr/bin/python3.11 "$here/exception.py" >/dev/null 2>"$here/logs/exception.txt") || true
echo "testdata/python: $(jq '.cases | length' manifest.json) cores"
