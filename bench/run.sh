#!/usr/bin/env bash
# run.sh: time faultline's core engine against gdb, eu-stack and lldb on the
# bigjob corpus (libbig.so with hundreds of MiB of DWARF, 256 parked threads,
# one crash) with a 1 GiB-heap core and an 8 GiB-heap core, print wall time and
# peak RSS ratios, and check faultline's frames against gdb's (bench/framecheck).
#
#   bash bench/run.sh
#
# Environment: FAULTLINE_BENCH_CACHE (default ~/.cache/faultline-bench),
# BENCH_RUNS (runs per tool and core, median taken; default 3),
# BENCH_TOOLS (default "faultline gdb eu-stack lldb"), BENCH_HEAPS (default "1 8").
# Exit status: 1 if faultline's crashing thread disagrees with gdb's, 2 if
# faultline did not build (the other tools are still measured), else 0.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
cache=${FAULTLINE_BENCH_CACHE:-$HOME/.cache/faultline-bench}
runs=${BENCH_RUNS:-3}
tools=${BENCH_TOOLS:-faultline gdb eu-stack lldb}
export BENCH_HEAPS=${BENCH_HEAPS:-1 8}
# No tool may fetch debug info from the network during the benchmark.
unset DEBUGINFOD_URLS
mkdir -p "$cache"

note() { echo "bench: $*" >&2; }

# --- what the benchmark needs ------------------------------------------------
apt_install() { # apt_install PKG: install PKG unless present; one apt command at a time.
	dpkg -s "$1" >/dev/null 2>&1 && return 0
	note "installing $1"
	apt-get -o DPkg::Lock::Timeout=600 install -y "$1" >/dev/null ||
		{ apt-get -o DPkg::Lock::Timeout=600 update >/dev/null && apt-get -o DPkg::Lock::Timeout=600 install -y "$1" >/dev/null; }
}
apt_install time
apt_install elfutils
if ! dpkg -s lldb >/dev/null 2>&1 && ! apt-cache show lldb >/dev/null 2>&1; then
	apt-get -o DPkg::Lock::Timeout=600 update >/dev/null || true
fi
if dpkg -s lldb >/dev/null 2>&1 || apt-cache show lldb >/dev/null 2>&1; then
	apt_install lldb
else
	note "NOTE: no lldb package in this distribution's archive; lldb is skipped"
	tools=${tools//lldb/}
fi

note "building faultline and framecheck into $cache"
have_faultline=1
(cd "$repo" && go build -o "$cache/faultline" .) || { note "NOTE: faultline does not build; it is skipped"; have_faultline=0; }
have_framecheck=1
(cd "$repo" && go build -o "$cache/framecheck" ./bench/framecheck) || { note "NOTE: bench/framecheck does not build; frame agreement is skipped"; have_framecheck=0; }
wanted_faultline=0
[[ " $tools " == *" faultline "* ]] && wanted_faultline=1
[[ $have_faultline == 1 ]] || tools=${tools//faultline/}

dir=$(bash "$here/corpus.sh" all | tail -1)
bigjob=$dir/bigjob
res=$dir/results
rm -rf "$res"
mkdir -p "$res"

# --- measuring ---------------------------------------------------------------
set_cmd() { # set_cmd TOOL CORE: sets cmd to the command each tool is timed on.
	case $1 in
	faultline) cmd=("$cache/faultline" analyze --json --exe "$bigjob" "$2") ;;
	gdb) cmd=(gdb -batch -nx -ex 'set pagination off' -ex 'thread apply all bt' "$bigjob" "$2") ;;
	eu-stack) cmd=(eu-stack -i -s --core="$2" -e "$bigjob") ;;
	lldb) cmd=(lldb --batch -c "$2" "$bigjob" -o 'thread backtrace all') ;;
	esac
}

count_threads_frames() { # count_threads_frames TOOL OUT: "THREADS FRAMES" the tool printed.
	case $1 in
	faultline) echo "$(grep -o '"crashed"' "$2" | wc -l) $(grep -o '"index"' "$2" | wc -l)" ;;
	# gdb prints the current frame once on loading the core; count from the first thread header.
	gdb) awk '/^Thread [0-9]/ { t++ } t && /^#[0-9]/ { n++ } END { print t + 0, n + 0 }' "$2" ;;
	eu-stack) echo "$(grep -c '^TID ' "$2") $(grep -c '^#[0-9]' "$2")" ;;
	lldb) echo "$(grep -c '^\*\? *thread #' "$2") $(grep -c '^ *\*\? *frame #' "$2")" ;;
	esac
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "" }'; }

raw=$res/raw.tsv
: >"$raw"
for heap in $BENCH_HEAPS; do
	core=$dir/cores/${heap}g/core
	for tool in $tools; do
		for ((r = 1; r <= runs; r++)); do
			out=$res/${heap}g.$tool.out
			set +e
			set_cmd "$tool" "$core"
			/usr/bin/time -f '%e %M' -o "$res/time" "${cmd[@]}" >"$out" 2>"$res/${heap}g.$tool.err" </dev/null
			rc=$?
			set -e
			read -r wall rss < <(tail -1 "$res/time")
			read -r nthreads nframes < <(count_threads_frames "$tool" "$out")
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$heap" "$tool" "$wall" "$rss" "$rc" "$nthreads" "$nframes" >>"$raw"
			note "$(printf '%4s GiB  %-9s run %d: %7.2f s  %7.1f MiB  exit %d  %d threads  %d frames' \
				"$heap" "$tool" "$r" "$wall" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" "$rc" "$nthreads" "$nframes")"
			if [[ $tool == faultline && $rc != 0 && $r == 1 ]]; then
				note "faultline failed (exit $rc): $(head -c 400 "$res/${heap}g.$tool.err")"
				break
			fi
		done
	done
done

# --- report ------------------------------------------------------------------
stat() { # stat HEAP TOOL COLUMN: median of a raw.tsv column (3 wall, 4 rss KiB).
	awk -F'\t' -v h="$1" -v t="$2" -v c="$3" '$1 == h && $2 == t { print $c }' "$raw" | median
}
last() { # last HEAP TOOL COLUMN: a column of the tool's last run.
	awk -F'\t' -v h="$1" -v t="$2" -v c="$3" '$1 == h && $2 == t { v = $c } END { print v }' "$raw"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.1f", a / b }'; }
percent() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.0f%%", 100 * a / b }'; }

summary=$res/summary.txt
{
	echo "faultline benchmark: $(date -u +%FT%TZ), $(nproc) cores, corpus $dir"
	echo "libbig.so DWARF: $(awk '$1 ~ /^\.debug_/ { s += $2 } END { printf "%.1f MiB", s / 1048576 }' "$dir/libbig.size.txt")" \
		"(.debug_info $(awk '$1 == ".debug_info" { printf "%.1f MiB", $2 / 1048576 }' "$dir/libbig.size.txt")), corpus build $(cat "$dir/build-time.txt") s"
	echo "median of $runs runs; wall time and peak RSS from /usr/bin/time -f '%e %M'"
	echo
	printf '%-8s %-10s %9s %12s %8s %8s %5s\n' heap tool "wall s" "peak RSS MiB" threads frames exit
	for heap in $BENCH_HEAPS; do
		for tool in $tools; do
			w=$(stat "$heap" "$tool" 3)
			[[ -n $w ]] || continue
			printf '%-8s %-10s %9.2f %12.1f %8s %8s %5s\n' "${heap} GiB" "$tool" "$w" \
				"$(awk -v k="$(stat "$heap" "$tool" 4)" 'BEGIN { print k / 1024 }')" \
				"$(last "$heap" "$tool" 6)" "$(last "$heap" "$tool" 7)" "$(last "$heap" "$tool" 5)"
		done
	done
	echo
	for heap in $BENCH_HEAPS; do
		fw=$(stat "$heap" faultline 3)
		fr=$(stat "$heap" faultline 4)
		[[ -n $fw ]] || { echo "${heap} GiB: no faultline figures (see $res/${heap}g.faultline.err)"; continue; }
		for other in gdb eu-stack lldb; do
			ow=$(stat "$heap" "$other" 3)
			[[ -n $ow ]] || continue
			echo "${heap} GiB: $other/faultline time x$(ratio "$ow" "$fw"), faultline RSS = $(percent "$fr" "$(stat "$heap" "$other" 4)") of $other"
		done
	done
	set -- $BENCH_HEAPS
	if [[ $# -ge 2 ]]; then
		lo=$1 hi=${!#}
		echo
		echo "core size ${lo} GiB -> ${hi} GiB (cost should follow threads and touched CUs, not core size):"
		for tool in $tools; do
			echo "  $tool: time x$(ratio "$(stat "$hi" "$tool" 3)" "$(stat "$lo" "$tool" 3)"), peak RSS x$(ratio "$(stat "$hi" "$tool" 4)" "$(stat "$lo" "$tool" 4)")"
		done
	fi
} | tee "$summary"

# --- frame agreement -----------------------------------------------------------
status=0
if [[ $have_framecheck == 1 && " $tools " == *" faultline "* && " $tools " == *" gdb "* ]]; then
	for heap in $BENCH_HEAPS; do
		{ echo; echo "frame agreement, ${heap} GiB core (faultline vs gdb):"; } | tee -a "$summary"
		set +e
		"$cache/framecheck" -faultline "$res/${heap}g.faultline.out" -gdb "$res/${heap}g.gdb.out" | tee -a "$summary"
		rc=${PIPESTATUS[0]}
		set -e
		[[ $rc == 0 ]] || status=1
	done
else
	note "frame agreement skipped (needs faultline, gdb and framecheck)"
fi
note "outputs and summary in $res"
if [[ $wanted_faultline == 1 && $have_faultline == 0 ]]; then
	note "faultline was not measured (it did not build)"
	exit 2
fi
exit $status
