#!/usr/bin/env bash
# gen.sh rebuilds the native crash corpus: every program into bin/, each
# crash's core into cores/NAME.core.gz, gdb's view of it into
# cores/NAME.gdb.txt, manifest.json, and the apport report of null_inline's
# crash (cores/null_inline.crash). It runs from any cwd and may be run
# again at any time; everything it writes is rebuilt from scratch.
#
# Needs gcc, g++, gdb, objcopy, strip, readelf, eu-readelf (elfutils), gzip,
# jq and go.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here"

# --if-stale: rebuild only when this machine's system libraries are not the
# ones the checked-in cores map (their build-ids are in manifest.json); the
# cores can only be symbolized, by gdb or by faultline, against those.
if [ "${1:-}" = "--if-stale" ] || [ "${1:-}" = "--check" ]; then
  stale=$(jq -r '.cases[].systemLibraries[] | "\(.path) \(.buildId)"' manifest.json | sort -u | bash "$here/../../.ci/stale-buildids.sh")
  if [ -z "$stale" ]; then
    echo "testdata/native: cores match this machine's libraries"
    exit 0
  fi
  echo "testdata/native: system libraries differ from the cores' ($stale ); regenerating"
  [ "${1:-}" = "--check" ] && exit 3
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Classification cases (analysis/classify): not gdb-oracle cases, so they
# are not in manifest.json. racy_map's crash site changes from run to run, so
# it is run until it has left cores with $racy_cores different crashing
# functions (gdb's frame #0); lock_deadlock never crashes and is dumped with
# gcore once both workers block on the other's mutex.
racy_cores=4
gen_classify_cases() {
  local dir
  echo "== build classification cases"
  mkdir -p bin cores
  g++ -O1 -g -pthread -o bin/racy_map racy_map.cpp
  gcc -O0 -g -pthread -o bin/lock_deadlock lock_deadlock.c

  echo "== racy_map"
  rm -f cores/racy_map.*.core.gz
  local kept=0 run top seen=""
  for run in $(seq 1 60); do
    [ "$kept" -ge "$racy_cores" ] && break
    dir="$work/racy_map.$run"
    mkdir -p "$dir"
    (cd "$dir" && ulimit -c unlimited && ulimit -s 256 && "$here/bin/racy_map" >/dev/null 2>&1) || true
    [ -s "$dir/core" ] || continue
    top=$(gdb -batch -nx -ex 'bt 1' "$here/bin/racy_map" "$dir/core" 2>/dev/null |
      sed -n 's/^#0  *\(0x[0-9a-f]* in \)\{0,1\}\([^ (]*\).*/\2/p' | head -n1)
    case "|$seen|" in *"|$top|"*) continue ;; esac
    seen="$seen|$top"
    kept=$((kept + 1))
    gzip -9 -n -c "$dir/core" >"cores/racy_map.$kept.core.gz"
    echo "   core $kept: run $run, frame #0 in $top, gz $(stat -c %s "cores/racy_map.$kept.core.gz") bytes"
  done
  [ "$kept" -ge 2 ] || { echo "gen.sh: racy_map left fewer than 2 distinct cores" >&2; exit 1; }

  echo "== lock_deadlock"
  dir="$work/lock_deadlock"
  mkdir -p "$dir"
  "$here/bin/lock_deadlock" >"$dir/stdout.txt" 2>&1 &
  local pid=$! tries=0 blocked
  # Wait until both workers sleep in futex(2) (syscall 202) on a mutex.
  while :; do
    blocked=0
    for t in /proc/$pid/task/*; do
      [ "$(basename "$t")" = "$pid" ] && continue
      read -r nr _ <"$t/syscall" 2>/dev/null || nr=""
      [ "$nr" = "202" ] && blocked=$((blocked + 1))
    done
    [ "$blocked" -ge 2 ] && break
    tries=$((tries + 1))
    [ "$tries" -lt 500 ] || { kill -9 "$pid"; echo "gen.sh: lock_deadlock did not block" >&2; exit 1; }
    sleep 0.01
  done
  gcore -o "$dir/core" "$pid" >/dev/null 2>&1
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  gzip -9 -n -c "$dir/core.$pid" >cores/lock_deadlock.core.gz
  gdb -batch -nx -ex 'set pagination off' -ex 'info threads' -ex 'thread apply all bt' \
    "$here/bin/lock_deadlock" "$dir/core.$pid" >cores/lock_deadlock.gdb.txt 2>&1 || true
  echo "   core gz $(stat -c %s cores/lock_deadlock.core.gz) bytes"
}


# --classify-only rebuilds just the classification cases, leaving every
# other binary, core and manifest.json as they are.
if [ "${1:-}" = "--classify-only" ]; then
  gen_classify_cases
  exit 0
fi


rm -rf bin cores manifest.json
mkdir -p bin/.debug cores

# Sources are compiled with paths relative to this directory so that the
# DWARF file names stay short (DW_AT_name "null_inline.cpp").
echo "== build"
g++ -O2 -g -o bin/null_inline null_inline.cpp

gcc -O1 -g -fPIC -shared -o bin/libplugin.so plugin.c
objcopy --only-keep-debug bin/libplugin.so bin/.debug/libplugin.so.debug
strip --strip-debug bin/libplugin.so
objcopy --add-gnu-debuglink=bin/.debug/libplugin.so.debug bin/libplugin.so
gcc -O0 -g -o bin/dlopen_plugin dlopen_main.c -ldl -Wl,-rpath,'$ORIGIN'

gcc -O0 -g -pthread -o bin/threads64 threads64.c
gcc -O0 -g -o bin/reraise reraise.c
g++ -O0 -g -o bin/static_dtor static_dtor.cpp
g++ -O0 -g -o bin/uncaught_throw uncaught_throw.cpp
gcc -O0 -g -fno-stack-protector -o bin/stack_smash stack_smash.c
gcc -O0 -g -o bin/recursion recursion.c
gcc -O0 -g -o bin/assert_abort assert_abort.c
gcc -O0 -g -o bin/double_free double_free.c
gcc -O0 -g -o bin/noncanonical noncanonical.c
gcc -O0 -g -o bin/sigfpe sigfpe.c
gcc -O2 -g -static -o bin/demo demo.c

# name|source|signal|extra search dirs (comma-separated, relative to here)|description
cases=(
  "null_inline|null_inline.cpp|SIGSEGV||NULL member read three inlined helpers deep (value_of <- next_value <- add_next <- sum_prefix), g++ -O2"
  "dlopen_plugin|dlopen_main.c,plugin.c|SIGSEGV|bin|NULL dereference inside a dlopen()ed libplugin.so whose DWARF is in bin/.debug/libplugin.so.debug (debuglink)"
  "threads64|threads64.c|SIGSEGV||64 named workers parked in pthread_cond_wait/nanosleep in four call chains; main writes through NULL (65 threads)"
  "reraise|reraise.c|SIGSEGV||LLVM-style handler restores SIG_DFL and re-raises with tgkill: syscall, SignalHandler, <signal handler called>, tensor_sum"
  "static_dtor|static_dtor.cpp|SIGSEGV||Client::~Client of a static object calls through a NULL member during exit()"
  "uncaught_throw|uncaught_throw.cpp|SIGABRT||uncaught std::out_of_range from vector::at in (anonymous namespace)::Table<int>::row via RowPrinter::operator(); libstdc++ frames print \"?? () from\""
  "stack_smash|stack_smash.c|SIGBUS||a 24-byte memcpy into char[16] clobbers main's saved %rbp with 0x41s; main faults on its next local (#SS: SIGBUS) and gdb prints \"Backtrace stopped\""
  "recursion|recursion.c|SIGSEGV||unbounded recursion of descend() overflows the 8 MiB stack (~30,000 frames)"
  "assert_abort|assert_abort.c|SIGABRT||failing assert() in buffer_append aborts"
  "double_free|double_free.c|SIGABRT||glibc aborts: free(): double free detected in tcache 2"
  "noncanonical|noncanonical.c|SIGSEGV||read through non-canonical 0xdead000000000010: #GP, si_code SI_KERNEL, si_addr 0"
  "sigfpe|sigfpe.c|SIGFPE||integer division by zero in average(): SIGFPE, FPE_INTDIV"
  "demo|demo.c|SIGSEGV||the bundled demo: static -O2 record loader; inlined field_value reads NULL->value (address 0x8)"
)

# system_libs prints "path buildid" for each system library that the core
# maps (from its NT_FILE note).
system_libs() {
  eu-readelf -n "$1" 2>/dev/null |
    awk '$1 ~ /^[0-9a-f]+-[0-9a-f]+$/ && $4 ~ /^\// {print $4}' |
    { grep -E '/(libc\.so\.6|ld-linux-x86-64\.so\.2|libstdc\+\+\.so\.6[.0-9]*|libgcc_s\.so\.1|libm\.so\.6)$' || true; } |
    sort -u |
    while read -r lib; do
      id=$(readelf -n "$lib" 2>/dev/null | awk '/Build ID:/ {print $3; exit}')
      echo "$lib $id"
    done
}

# terminal_view prints what a user copies from an 80-column terminal after
# running gdb's commands $3...: gdb wraps long frames onto indented
# continuation lines, and prints "(More stack frames follow...)", only when
# it talks to a tty, so it runs under script(1).
terminal_view() {
  local bin=$1 core=$2 cmds="" c
  shift 2
  for c in "$@"; do cmds+=" -ex '$c'"; done
  script -qec "stty cols 80 rows 24; gdb -nx -q -iex 'set style enabled off' -ex 'set pagination off' -ex 'set width 80'$cmds -ex 'quit' '$bin' '$core'" /dev/null </dev/null |
    tr -d '\r'
}

# Extra gdb views of some cases, each in cores/NAME.VIEW.gdb.txt.
declare -A views=(
  [assert_abort]="tty80"
  [uncaught_throw]="tty80"
  [recursion]="bt5"
  [threads64]="live"
)

entries=()
for c in "${cases[@]}"; do
  IFS='|' read -r name src sig dirs desc <<<"$c"
  echo "== $name"
  dir="$work/$name"
  mkdir -p "$dir"
  (
    cd "$dir"
    ulimit -c unlimited
    "$here/bin/$name" >stdout.txt 2>stderr.txt
  ) || true
  core=$(find "$dir" -maxdepth 1 -name 'core*' -type f | head -n 1)
  if [ -z "$core" ]; then
    echo "   no kernel core; falling back to gdb generate-core-file"
    (cd "$dir" && gdb -batch -nx -ex run -ex "generate-core-file $dir/core" "$here/bin/$name" >/dev/null 2>&1) || true
    core="$dir/core"
  fi
  [ -s "$core" ] || { echo "gen.sh: no core for $name" >&2; exit 1; }

  gdbargs=(-batch -nx -ex 'set pagination off')
  searchjson='[]'
  if [ -n "$dirs" ]; then
    gdbargs+=(-ex "set solib-search-path $(echo "$dirs" | sed "s|[^,]*|$here/&|g; s|,|:|g")")
    searchjson=$(jq -cn --arg d "$dirs" '$d | split(",")')
  fi
  gdbargs+=(-ex 'info threads' -ex 'thread apply all bt')
  gdb "${gdbargs[@]}" "$here/bin/$name" "$core" >"cores/$name.gdb.txt" 2>&1 || true

  viewsjson='[]'
  for view in ${views[$name]:-}; do
    out="cores/$name.$view.gdb.txt"
    case $view in
    tty80) terminal_view "$here/bin/$name" "$core" 'info threads' 'bt' 'bt 3' >"$out" ;;
    bt5) terminal_view "$here/bin/$name" "$core" 'bt 5' 'bt -3' >"$out" ;;
    live)
      # A second run under gdb (not the core's run): live thread names and
      # "Thread 1 "NAME" received signal ...".
      (cd "$dir" && timeout 300 gdb -batch -nx -ex 'set pagination off' -ex run -ex 'info threads' \
        -ex 'thread apply all bt' "$here/bin/$name") >"$out" 2>&1 </dev/null || true
      ;;
    esac
    viewsjson=$(jq -c --arg v "$out" '. + [$v]' <<<"$viewsjson")
  done

  libsjson=$(system_libs "$core" | jq -R 'split(" ") | {path: .[0], buildId: .[1]}' | jq -cs .)
  gzip -9 -n -c "$core" >"cores/$name.core.gz"
  size=$(stat -c %s "cores/$name.core.gz")
  echo "   core $(stat -c %s "$core") bytes, gz $size bytes"
  if [ "$size" -ge $((2 * 1024 * 1024)) ]; then
    echo "gen.sh: cores/$name.core.gz is over 2 MB" >&2
    exit 1
  fi
  entries+=("$(jq -cn --arg name "$name" --arg src "$src" --arg sig "$sig" --arg desc "$desc" \
    --argjson dirs "$searchjson" --argjson libs "$libsjson" --argjson views "$viewsjson" \
    '{name: $name, description: $desc, sources: ($src | split(",")), binary: ("bin/" + $name),
      core: ("cores/" + $name + ".core.gz"), gdb: ("cores/" + $name + ".gdb.txt"), gdbViews: $views,
      searchDirs: $dirs, signal: $sig, systemLibraries: $libs}')")
done

printf '%s\n' "${entries[@]}" | jq -s '{cases: .}' >manifest.json
# The apport report apport would write of null_inline's crash (Ubuntu's
# /var/crash/*.crash): editors and the CLI open it like the core.
echo "== apport report of null_inline"
(cd "$here/../.." && go run ./internal/apporttest/apportreport "$here/cores/null_inline.core.gz" "$here/cores/null_inline.crash")
gen_classify_cases
echo "== done: $(du -sh "$here" | cut -f1) in $here"
