#!/usr/bin/env bash
# corpus.sh: generate and build the benchmark corpus (libbig.so + bigjob) once,
# and write its cores. Prints the corpus directory on stdout's last line.
#
#   bash bench/corpus.sh [build|cores]     (default: both)
#
# Everything goes to ${FAULTLINE_BENCH_CACHE:-$HOME/.cache/faultline-bench}/corpus-KEY,
# where KEY is a hash of what bench/gen generates (sources and Makefile), so the
# ~10-minute build happens once per generator version, and a change to the
# generator that does not change its output keeps the cache. Heap sizes of the cores: $BENCH_HEAPS (GiB, default "1 8").
# BENCH_GEN_ARGS passes flags to the generator (e.g. "-units 40 -types 1" for a
# quick smoke corpus); they are part of the key.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
cache=${FAULTLINE_BENCH_CACHE:-$HOME/.cache/faultline-bench}
heaps=${BENCH_HEAPS:-1 8}
jobs=${BENCH_JOBS:-$(nproc)}
what=${1:-all}
genargs=${BENCH_GEN_ARGS:-}

log() { echo "corpus: $*" >&2; }

mkdir -p "$cache"
gen=$(mktemp -d "$cache/gen.XXXXXX")
trap 'rm -rf "$gen"' EXIT
# shellcheck disable=SC2086 # genargs is a list of flags
(cd "$repo" && go run ./bench/gen -out "$gen" $genargs)
key=$(cd "$gen" && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)
dir=$cache/corpus-$key
mkdir -p "$dir"

build() {
	if [[ -x $dir/bigjob && -f $dir/libbig.so && -f $dir/build-time.txt ]]; then
		log "reusing $dir (built in $(cat "$dir/build-time.txt") s)"
		return
	fi
	log "sources in $dir"
	rm -rf "$dir/src" "$dir/Makefile"
	cp -r "$gen/src" "$gen/Makefile" "$dir/"
	log "building with make -j$jobs (about 10 minutes on 2 cores; log: $dir/build.log)"
	local start end
	start=$(date +%s.%N)
	if ! make -C "$dir" -j"$jobs" >"$dir/build.log" 2>&1; then
		tail -30 "$dir/build.log" >&2
		log "build failed; see $dir/build.log"
		exit 1
	fi
	end=$(date +%s.%N)
	# The objects carry large .rela.debug_* sections; only the linked outputs are needed.
	rm -rf "$dir/obj"
	awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f\n", e - s }' >"$dir/build-time.txt"
	size -A "$dir/libbig.so" >"$dir/libbig.size.txt"
	log "built in $(cat "$dir/build-time.txt") s; DWARF $(dwarf_mib) MiB"
}

# dwarf_mib prints the total size of libbig.so's .debug_* sections in MiB.
dwarf_mib() {
	awk '$1 ~ /^\.debug_/ { s += $2 } END { printf "%.1f\n", s / 1048576 }' "$dir/libbig.size.txt"
}

cores() {
	local gib c
	for gib in $heaps; do
		c=$dir/cores/${gib}g
		if [[ -f $c/core && -f $c/done ]]; then
			log "reusing $c/core"
			continue
		fi
		rm -rf "$c"
		mkdir -p "$c"
		log "writing the ${gib} GiB-heap core into $c (kernel core_pattern: $(cat /proc/sys/kernel/core_pattern))"
		(
			cd "$c"
			ulimit -c unlimited
			set +e
			"$dir/bigjob" "$gib" 256 >bigjob.out 2>&1
			echo "exit status $?" >>bigjob.out
		)
		local f
		f=$(ls -t "$c"/core* 2>/dev/null | head -1 || true)
		if [[ -z $f ]]; then
			log "no core in $c: check 'ulimit -c' and /proc/sys/kernel/core_pattern (want 'core')"
			cat "$c/bigjob.out" >&2
			exit 1
		fi
		[[ $f == "$c/core" ]] || mv "$f" "$c/core"
		touch "$c/done"
		log "core: $(du -h --apparent-size "$c/core" | cut -f1) ($(du -h "$c/core" | cut -f1) on disk)"
	done
}

case $what in
build) build ;;
cores) cores ;;
all) build; cores ;;
*) echo "usage: corpus.sh [build|cores|all]" >&2; exit 2 ;;
esac
echo "$dir"
