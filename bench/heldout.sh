#!/usr/bin/env bash
# heldout.sh: time faultline against gdb, eu-stack -i and lldb on workloads
# bench/gen's corpus was not tuned on, one run each, side by side, and check
# faultline's frames against gdb's (bench/framecheck). Workloads:
#   torch     Debian's python3 with python3-torch imported, crashing in a C
#             extension (crashext.c) called from a torch op (Tensor.apply_)
#   unity     libunity.so: two huge unity-build C++ units (2,000 template
#             instantiations) and 400 tiny C units; 8 parked threads
#   threads   the same program with 1,024 threads
#   sparse    8 threads and 32 GiB of mapped heap, one page per GiB touched
#             (a sparse core: cost must not follow the core's size)
# faultline runs three times per core: "cold" with an empty index cache,
# then "warm" with what the cold run stored (FAULTLINE_INDEX_CACHE), both
# with --json (the frames framecheck compares with gdb's), then "md": warm,
# the default markdown report, what a user runs.
#
#   bash bench/heldout.sh                      # all workloads
#   HELDOUT_WORKLOADS="unity threads" bash bench/heldout.sh
#
# Environment: FAULTLINE_BENCH_CACHE (default ~/.cache/faultline-bench),
# HELDOUT_WORKLOADS (default "torch unity threads sparse"), HELDOUT_TOOLS
# (default "gdb eu-stack lldb"), HELDOUT_STAGES / HELDOUT_TINY (libunity's
# shape, default 2000 / 400), HELDOUT_SPARSE_GIB (default 32).
# Exit status 1 if faultline's crashing thread disagrees with gdb's.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
cache=${FAULTLINE_BENCH_CACHE:-$HOME/.cache/faultline-bench}
workloads=${HELDOUT_WORKLOADS:-torch unity threads sparse}
tools=${HELDOUT_TOOLS:-gdb eu-stack lldb}
stages=${HELDOUT_STAGES:-2000}
tiny=${HELDOUT_TINY:-400}
sparse=${HELDOUT_SPARSE_GIB:-32}
unset DEBUGINFOD_URLS
note() { echo "heldout: $*" >&2; }

need() { # need PKG: install a Debian package the benchmark uses, if missing.
	dpkg -s "$1" >/dev/null 2>&1 && return 0
	note "installing $1"
	apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "$1" >/dev/null ||
		{ apt-get -o DPkg::Lock::Timeout=600 update >/dev/null && apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "$1" >/dev/null; }
}
for p in time gdb elfutils lldb g++ libc6-dbg; do need "$p"; done
[[ " $workloads " == *" torch "* ]] && { need python3-torch; need python3-dev; }

# The key covers what the native build depends on; the torch workload's
# extension and core are redone when their sources are newer.
key=$(cat "$here/heldout/gen.sh" "$here/heldout/heldout.c" | { cat; echo "$stages $tiny $sparse"; } | sha256sum | cut -c1-16)
dir=$cache/heldout-$key
mkdir -p "$dir/cores" "$dir/results"
(cd "$repo" && go build -o "$dir/faultline" . && go build -o "$dir/framecheck" ./bench/framecheck)

# --- build (once per generator version) ---------------------------------------
if [[ ! -x $dir/heldout ]]; then
	note "generating and building libunity.so ($stages stages, $tiny tiny units) in $dir; minutes"
	rm -rf "$dir/src" && bash "$here/heldout/gen.sh" "$dir/src" "$stages" "$tiny"
	start=$(date +%s)
	(cd "$dir/src" && ls unity_*.cpp tiny_*.c | xargs -P"$(nproc)" -I{} sh -c 'case {} in *.cpp) g++ -g -O2 -fPIC -c {} ;; *) gcc -g -O2 -fPIC -c {} ;; esac')
	g++ -shared -o "$dir/libunity.so" "$dir"/src/*.o
	rm -f "$dir"/src/*.o
	gcc -g -O2 -o "$dir/heldout" "$here/heldout/heldout.c" -L"$dir" -lunity -Wl,-rpath,"$dir" -lpthread
	echo $(($(date +%s) - start)) >"$dir/build-time.txt"
fi
if [[ " $workloads " == *" torch "* && ( ! -f $dir/crashext.so || $here/heldout/crashext.c -nt $dir/crashext.so ) ]]; then
	gcc -shared -fPIC -g -O2 $(/usr/bin/python3-config --includes) "$here/heldout/crashext.c" -o "$dir/crashext$(/usr/bin/python3-config --extension-suffix)"
	rm -rf "$dir/cores/torch"
	ln -sf "crashext$(/usr/bin/python3-config --extension-suffix)" "$dir/crashext.so"
fi

# --- cores (once) ------------------------------------------------------------
[[ $(cat /proc/sys/kernel/core_pattern) == core ]] || note "WARNING: core_pattern is not 'core'; cores may not be written"
write_core() { # write_core NAME CMD...: run CMD in cores/NAME until it dumps core.
	local d=$dir/cores/$1
	shift
	[[ -f $d/core ]] && return 0
	mkdir -p "$d"
	note "writing the $(basename "$d") core"
	(cd "$d" && ulimit -c unlimited && "$@" >/dev/null 2>&1) || true
	[[ -f $d/core ]] || { note "no core written for $d"; return 1; }
}
exe_of() { # exe_of WORKLOAD: the crashed program.
	case $1 in torch) readlink -f /usr/bin/python3 ;; *) echo "$dir/heldout" ;; esac
}
for w in $workloads; do
	case $w in
	torch)
		[[ $here/heldout/torchcrash.py -nt $dir/cores/torch/core ]] && rm -rf "$dir/cores/torch"
		write_core torch /usr/bin/python3 "$here/heldout/torchcrash.py" "$dir" ;;
	unity) write_core unity "$dir/heldout" 8 0 ;;
	threads) write_core threads "$dir/heldout" 1024 0 ;;
	sparse) write_core sparse "$dir/heldout" 8 "$sparse" ;;
	esac
done

# --- measuring ---------------------------------------------------------------
res=$dir/results
raw=$res/raw.tsv
: >"$raw"
measure() { # measure WORKLOAD TOOL CMD...: one timed run; output in results/.
	local w=$1 t=$2
	shift 2
	local out=$res/$w.$t.out
	set +e
	/usr/bin/time -f '%e %M %U %S' -o "$res/time" "$@" >"$out" 2>"$res/$w.$t.err" </dev/null
	local rc=$?
	set -e
	read -r wall rss usr sys < <(tail -1 "$res/time")
	local frames
	case $t in
	faultline-md) frames=- ;; # the markdown report groups threads: no frame count
	faultline*) frames=$(grep -o '"index"' "$out" | wc -l) ;;
	gdb) frames=$(awk '/^Thread [0-9]/ { t++ } t && /^#[0-9]/ { n++ } END { print n + 0 }' "$out") ;;
	eu-stack) frames=$(grep -c '^#[0-9]' "$out") ;;
	lldb) frames=$(grep -c '^ *\*\? *frame #' "$out") ;;
	esac
	local cpu
	cpu=$(awk -v u="$usr" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$w" "$t" "$wall" "$rss" "$rc" "$frames" "$cpu" >>"$raw"
	note "$(printf '%-8s %-15s %7.2f s (cpu %6.2f s) %8.1f MiB exit %d %6d frames' "$w" "$t" "$wall" "$cpu" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" "$rc" "$frames")"
}
for w in $workloads; do
	core=$dir/cores/$w/core
	[[ -f $core ]] || continue
	exe=$(exe_of "$w")
	idx=$(mktemp -d "$res/index.XXXXXX")
	FAULTLINE_INDEX_CACHE=$idx measure "$w" faultline-cold "$dir/faultline" analyze --json --exe "$exe" "$core"
	FAULTLINE_INDEX_CACHE=$idx measure "$w" faultline-warm "$dir/faultline" analyze --json --exe "$exe" "$core"
	FAULTLINE_INDEX_CACHE=$idx measure "$w" faultline-md "$dir/faultline" analyze --exe "$exe" "$core"
	rm -rf "$idx"
	for t in $tools; do
		case $t in
		gdb) measure "$w" gdb gdb -batch -nx -ex 'set pagination off' -ex 'thread apply all bt' "$exe" "$core" ;;
		eu-stack) measure "$w" eu-stack eu-stack -i -s --core="$core" -e "$exe" ;;
		lldb) measure "$w" lldb lldb --batch -c "$core" "$exe" -o 'thread backtrace all' ;;
		esac
	done
done

# --- report ------------------------------------------------------------------
col() { awk -F'\t' -v w="$1" -v t="$2" -v c="$3" '$1 == w && $2 == t { print $c }' "$raw"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "x%.1f", a / b }'; }
summary=$res/summary.txt
{
	echo "faultline held-out benchmark: $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), one run each"
	echo "libunity.so: $stages template stages in 2 units + $tiny tiny units; DWARF $(size -A "$dir/libunity.so" | awk '$1 ~ /^\.debug_/ { s += $2 } END { printf "%.1f MiB", s / 1048576 }')"
	echo "ratios: the other tool's wall time / this one's (cpu: user+sys seconds, the same ratio in brackets)"
	printf '%-8s %-15s %7s %7s %8s %7s %4s  %-15s %-15s %-15s %s\n' workload tool "wall s" "cpu s" "RSS MiB" frames exit "gdb/this" "eu/this" "lldb/this" "RSS % eu"
	for w in $workloads; do
		g=$(col "$w" gdb 3) e=$(col "$w" eu-stack 3) l=$(col "$w" lldb 3) er=$(col "$w" eu-stack 4)
		gc=$(col "$w" gdb 7) ec=$(col "$w" eu-stack 7) lc=$(col "$w" lldb 7)
		for t in faultline-cold faultline-warm faultline-md $tools; do
			wall=$(col "$w" "$t" 3)
			[[ -n $wall ]] || continue
			rss=$(col "$w" "$t" 4) cpu=$(col "$w" "$t" 7)
			printf '%-8s %-15s %7.2f %7.2f %8.1f %7s %4s  %-15s %-15s %-15s %s\n' "$w" "$t" "$wall" "$cpu" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" \
				"$(col "$w" "$t" 6)" "$(col "$w" "$t" 5)" "$(ratio "$g" "$wall") [$(ratio "$gc" "$cpu")]" "$(ratio "$e" "$wall") [$(ratio "$ec" "$cpu")]" \
				"$(ratio "$l" "$wall") [$(ratio "$lc" "$cpu")]" \
				"$(awk -v a="$rss" -v b="$er" 'BEGIN { if (b) printf "%.0f%%", 100 * a / b; else print "n/a" }')"
		done
	done
	if [[ -n $(col unity faultline-cold 3) && -n $(col sparse faultline-cold 3) ]]; then
		echo "sparse ($sparse GiB mapped, core $(du -h --apparent-size "$dir/cores/sparse/core" | cut -f1) apparent) vs unity (small core): faultline cold time $(ratio "$(col sparse faultline-cold 3)" "$(col unity faultline-cold 3)"), cpu $(ratio "$(col sparse faultline-cold 7)" "$(col unity faultline-cold 7)"), RSS $(ratio "$(col sparse faultline-cold 4)" "$(col unity faultline-cold 4)")"
	fi
} | tee "$summary"

status=0
if [[ " $tools " == *" gdb "* ]]; then
	for w in $workloads; do
		[[ -f $res/$w.gdb.out ]] || continue
		{ echo; echo "frame agreement, $w (faultline vs gdb):"; } | tee -a "$summary"
		set +e
		"$dir/framecheck" -faultline "$res/$w.faultline-warm.out" -gdb "$res/$w.gdb.out" -diffs 5 | tee -a "$summary"
		rc=${PIPESTATUS[0]}
		set -e
		[[ $rc == 0 ]] || status=1
		cmp -s <(grep -v '"elapsed\|_ms"' "$res/$w.faultline-cold.out") <(grep -v '"elapsed\|_ms"' "$res/$w.faultline-warm.out") ||
			{ echo "  cold and warm runs printed different models" | tee -a "$summary"; status=1; }
	done
fi
note "outputs and summary in $res"
exit $status
