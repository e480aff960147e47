#!/usr/bin/env bash
# heldout.sh: time faultline against gdb, eu-stack -i and lldb on workloads
# bench/gen's corpus was not tuned on, side by side, alternating, in
# HELDOUT_ROUNDS rounds (medians reported), and check faultline's frames
# against gdb's (bench/framecheck). Workloads:
#   small     a small C++ crash (smallcrash.cpp: an exception nobody catches,
#             frames in the program, libstdc++ and libc with libc6-dbg)
#   torch     Debian's python3 with python3-torch imported, crashing in a C
#             extension (crashext.c) called from a torch op (Tensor.apply_)
#   big       bench/gen's bigjob (bench/corpus.sh, HELDOUT_BIG_GEN, default
#             "-units 66": 277 MB of DWARF): 258 threads and a 1 GiB heap
#             (HELDOUT_BIG_HEAP), a 1.35 GB core
#   unity     libunity.so: two huge unity-build C++ units (2,000 template
#             instantiations) and 400 tiny C units; 8 parked threads
#   threads   the same program with 1,024 threads
#   sparseN   8 threads and N GiB of mapped heap, one page per GiB touched
#             (sparse cores: cost must not follow the core's size; sparse1
#             and sparse64 by default, and the report compares the two)
#   many      HELDOUT_MANY (default 100) cores of the same program, each
#             crashed with another thread count, analyzed together by one
#             `faultline analyze DIR`; time per core against gdb on one
# faultline runs three times per core and round: "cold" with an empty index
# cache, then "warm" with what the cold run stored (FAULTLINE_INDEX_CACHE),
# both with --json (the frames framecheck compares with gdb's), then "md"
# (first round): warm, the default markdown report, what a user runs. Then
# bench/lspfirst starts `faultline serve` and times faultline.open -> first
# diagnostic over stdio: a server with an empty index cache ("cold": its
# first open; the second open takes the server's module pool), then a new
# server with the cache the first filled ("warm"). The report ends with
# issue 25's table: cold and warm against gdb and eu-stack, RSS and the LSP
# times, each target marked met or missed.
#
#   bash bench/heldout.sh                      # all workloads
#   HELDOUT_WORKLOADS="unity threads" bash bench/heldout.sh
#
# Environment: FAULTLINE_BENCH_CACHE (default ~/.cache/faultline-bench),
# HELDOUT_WORKLOADS (default "small torch big unity threads sparse1
# sparse64 many"), HELDOUT_ROUNDS (default 3), HELDOUT_BIG_GEN and
# HELDOUT_BIG_HEAP (bench/corpus.sh's BENCH_GEN_ARGS and heap in GiB),
# HELDOUT_TOOLS (default "gdb eu-stack lldb"), HELDOUT_STAGES / HELDOUT_TINY
# (libunity's shape, default 2000 / 400), HELDOUT_MANY (default 100).
# Exit status 1 if faultline's crashing thread disagrees with gdb's; the
# timings never fail it (a benchmark, not a timed test).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
cache=${FAULTLINE_BENCH_CACHE:-$HOME/.cache/faultline-bench}
workloads=${HELDOUT_WORKLOADS:-small torch big unity threads sparse1 sparse64 many}
rounds=${HELDOUT_ROUNDS:-3}
biggen=${HELDOUT_BIG_GEN:--units 66}
bigheap=${HELDOUT_BIG_HEAP:-1}
tools=${HELDOUT_TOOLS:-gdb eu-stack lldb}
stages=${HELDOUT_STAGES:-2000}
tiny=${HELDOUT_TINY:-400}
many=${HELDOUT_MANY:-100}
unset DEBUGINFOD_URLS
note() { echo "heldout: $*" >&2; }

need() { # need PKG: install a Debian package the benchmark uses, if missing.
	dpkg -s "$1" >/dev/null 2>&1 && return 0
	note "installing $1"
	apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "$1" >/dev/null ||
		{ apt-get -o DPkg::Lock::Timeout=600 update >/dev/null && apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "$1" >/dev/null; }
}
for p in time gdb elfutils g++ libc6-dbg; do need "$p"; done
[[ " $tools " == *" lldb "* ]] && need lldb
[[ " $workloads " == *" torch "* ]] && { need python3-torch; need python3-dev; }

# The key covers what the native build depends on; the small and torch
# workloads' programs and cores are redone when their sources' contents
# change (stale).
key=$(cat "$here/heldout/gen.sh" "$here/heldout/heldout.c" | { cat; echo "$stages $tiny"; } | sha256sum | cut -c1-16)
dir=$cache/heldout-$key
mkdir -p "$dir/cores" "$dir/results"
(cd "$repo" && go build -o "$dir/faultline" . && go build -o "$dir/framecheck" ./bench/framecheck && go build -o "$dir/lspfirst" ./bench/lspfirst)

# --- build (once per generator version) ---------------------------------------
needs_unity=false
for w in $workloads; do case $w in unity | threads | sparse* | many) needs_unity=true ;; esac; done
if $needs_unity && [[ ! -f $dir/libunity.so ]]; then
	note "generating and building libunity.so ($stages stages, $tiny tiny units) in $dir; minutes"
	rm -rf "$dir/src" && bash "$here/heldout/gen.sh" "$dir/src" "$stages" "$tiny"
	start=$(date +%s)
	(cd "$dir/src" && ls unity_*.cpp tiny_*.c | xargs -P"$(nproc)" -I{} sh -c 'case {} in *.cpp) g++ -g -O2 -fPIC -c {} ;; *) gcc -g -O2 -fPIC -c {} ;; esac')
	g++ -shared -o "$dir/libunity.so" "$dir"/src/*.o
	rm -f "$dir"/src/*.o
	echo $(($(date +%s) - start)) >"$dir/build-time.txt"
fi
if $needs_unity && [[ ! -x $dir/heldout ]]; then
	gcc -g -O2 -o "$dir/heldout" "$here/heldout/heldout.c" -L"$dir" -lunity -Wl,-rpath,"$dir" -lpthread
fi
# stale NAME FILE...: whether workload NAME's program and core were built from
# other contents of FILE... or other versions of the Debian packages they
# load (a copied checkout's new mtimes rebuild nothing); it records the new
# key, so the caller rebuilds them now.
stale() {
	local name=$1 key
	shift
	key=$({ cat "$@"; dpkg-query -W libc6 libstdc++6 python3-torch 2>/dev/null || true; } | sha256sum | cut -c1-16)
	[[ -f $dir/$name.key && $(cat "$dir/$name.key") == "$key" && -d $dir/cores/$name ]] && return 1
	rm -rf "${dir:?}/cores/$name"
	echo "$key" >"$dir/$name.key"
}
if [[ " $workloads " == *" small "* ]] && stale small "$here/heldout/smallcrash.cpp"; then
	g++ -g -O0 -o "$dir/smallcrash" "$here/heldout/smallcrash.cpp"
fi
bigdir=
if [[ " $workloads " == *" big "* ]]; then
	note "building or reusing bench/gen's corpus ($biggen, a $bigheap GiB heap): bench/corpus.sh"
	bigdir=$(BENCH_GEN_ARGS=$biggen BENCH_HEAPS=$bigheap bash "$here/corpus.sh" | tail -1)
fi
if [[ " $workloads " == *" torch "* ]] && stale torch "$here/heldout/crashext.c" "$here/heldout/torchcrash.py"; then
	gcc -shared -fPIC -g -O2 $(/usr/bin/python3-config --includes) "$here/heldout/crashext.c" -o "$dir/crashext$(/usr/bin/python3-config --extension-suffix)"
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
	(cd "$d" && ulimit -c unlimited && "$@") >/dev/null 2>&1 || true
	[[ -f $d/core ]] || { note "no core written for $d"; return 1; }
}
write_many() { # write_many N: N cores of heldout, thread counts 2..12, as cores/many/core.I.
	local d=$dir/cores/many i
	[[ -f $d/core.$(($1 - 1)) ]] && return 0
	note "writing $1 cores of one program"
	mkdir -p "$d/tmp"
	for ((i = 0; i < $1; i++)); do
		[[ -f $d/core.$i ]] && continue
		(cd "$d/tmp" && rm -f core && ulimit -c unlimited && "$dir/heldout" $((2 + i % 11)) 0) >/dev/null 2>&1 || true
		[[ -f $d/tmp/core ]] || { note "no core written for run $i"; return 1; }
		mv "$d/tmp/core" "$d/core.$i"
	done
	rmdir "$d/tmp"
}
core_of() { # core_of WORKLOAD: the core (the first, for many) tools other than faultline read.
	case $1 in
	many) echo "$dir/cores/many/core.0" ;;
	big) echo "$bigdir/cores/${bigheap}g/core" ;;
	*) echo "$dir/cores/$1/core" ;;
	esac
}
dumps_of() { # dumps_of WORKLOAD: what faultline analyzes.
	case $1 in many) echo "$dir/cores/many" ;; *) core_of "$1" ;; esac
}
exe_of() { # exe_of WORKLOAD: the crashed program.
	case $1 in
	torch) readlink -f /usr/bin/python3 ;;
	small) echo "$dir/smallcrash" ;;
	big) echo "$bigdir/bigjob" ;;
	*) echo "$dir/heldout" ;;
	esac
}
for w in $workloads; do
	case $w in
	small) write_core small "$dir/smallcrash" ;;
	torch) write_core torch /usr/bin/python3 "$here/heldout/torchcrash.py" "$dir" ;;
	unity) write_core unity "$dir/heldout" 8 0 ;;
	threads) write_core threads "$dir/heldout" 1024 0 ;;
	sparse[0-9]*) write_core "$w" "$dir/heldout" 8 "${w#sparse}" ;;
	many) write_many "$many" ;;
	esac
done

# --- measuring ---------------------------------------------------------------
res=$dir/results
raw=$res/raw.tsv
: >"$raw"
round=1
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
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$w" "$t" "$wall" "$rss" "$rc" "$frames" "$cpu" "$round" >>"$raw"
	note "$(printf 'round %d %-8s %-15s %7.3f s (cpu %6.2f s) %8.1f MiB exit %d %6s frames' "$round" "$w" "$t" "$wall" "$cpu" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" "$rc" "$frames")"
}
lspfirst() { # lspfirst WORKLOAD NAME INDEX: two opens of the core in one new server.
	local w=$1 name=$2 core exe
	core=$(core_of "$w") exe=$(exe_of "$w")
	FAULTLINE_INDEX_CACHE=$3 "$dir/lspfirst" -faultline "$dir/faultline" -core "$core" -exe "$exe" -root "$dir" -runs 2 \
		>"$res/$w.$name.out" 2>"$res/$w.$name.err" || note "lspfirst ($name) failed on $w (see $res/$w.$name.err)"
}
measure_faultline() { # measure_faultline WORKLOAD: cold, warm (and md, LSP: first round).
	local w=$1 dumps exe idx
	dumps=$(dumps_of "$w") exe=$(exe_of "$w")
	idx=$(mktemp -d "$res/index.XXXXXX")
	FAULTLINE_INDEX_CACHE=$idx measure "$w" faultline-cold "$dir/faultline" analyze --json --exe "$exe" "$dumps"
	FAULTLINE_INDEX_CACHE=$idx measure "$w" faultline-warm "$dir/faultline" analyze --json --exe "$exe" "$dumps"
	if ((round == 1)); then
		FAULTLINE_INDEX_CACHE=$idx measure "$w" faultline-md "$dir/faultline" analyze --exe "$exe" "$dumps"
		if [[ $w != many ]]; then
			local lidx
			lidx=$(mktemp -d "$res/index.XXXXXX")
			lspfirst "$w" lspcold "$lidx"
			lspfirst "$w" lspwarm "$lidx"
			rm -rf "${lidx:?}"
		fi
	fi
	rm -rf "${idx:?}"
}
for ((round = 1; round <= rounds; round++)); do
	for w in $workloads; do
		core=$(core_of "$w")
		[[ -f $core ]] || continue
		exe=$(exe_of "$w")
		measure_faultline "$w"
		for t in $tools; do
			case $t in
			gdb) measure "$w" gdb gdb -batch -nx -ex 'set pagination off' -ex 'thread apply all bt' "$exe" "$core" ;;
			eu-stack) measure "$w" eu-stack eu-stack -i -s --core="$core" -e "$exe" ;;
			lldb) measure "$w" lldb lldb --batch -c "$core" "$exe" -o 'thread backtrace all' ;;
			esac
		done
	done
done

# --- report ------------------------------------------------------------------
col() { # col WORKLOAD TOOL COLUMN: the median over the rounds.
	awk -F'\t' -v w="$1" -v t="$2" -v c="$3" '$1 == w && $2 == t { print $c }' "$raw" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "x%.1f", a / b }'; }
summary=$res/summary.txt
dwarf_mib() { size -A "$1" | awk '$1 ~ /^\.debug_/ { s += $2 } END { printf "%.1f MiB", s / 1048576 }'; }
report_sparse() { # the biggest sparse core against the smallest: cost must not follow core size.
	local ws lo hi t
	ws=$(for w in $workloads; do if [[ $w == sparse[0-9]* && -n $(col "$w" faultline-cold 3) ]]; then echo "${w#sparse}"; fi; done | sort -n)
	lo=sparse$(head -1 <<<"$ws") hi=sparse$(tail -1 <<<"$ws")
	[[ -n $ws && $lo != "$hi" ]] || return 0
	echo "time flat with core size: $hi (core $(du -h --apparent-size "$dir/cores/$hi/core" | cut -f1) apparent) / $lo (core $(du -h --apparent-size "$dir/cores/$lo/core" | cut -f1)):"
	for t in faultline-cold faultline-warm faultline-md; do
		echo "  $t: wall $(ratio "$(col "$hi" "$t" 3)" "$(col "$lo" "$t" 3)"), cpu $(ratio "$(col "$hi" "$t" 7)" "$(col "$lo" "$t" 7)"), RSS $(ratio "$(col "$hi" "$t" 4)" "$(col "$lo" "$t" 4)")"
	done
}
report_many() { # many cores together: time per core against gdb on one.
	[[ -n $(col many faultline-cold 3) ]] || return 0
	local t g
	g=$(col many gdb 3)
	echo "$many cores of one program analyzed together (faultline analyze DIR, $(nproc) cores; gdb, eu-stack and lldb on one of them):"
	for t in faultline-cold faultline-warm; do
		echo "  $t: $(col many "$t" 3) s wall, $(col many "$t" 7) s cpu in all; per core $(awk -v a="$(col many "$t" 3)" -v n="$many" 'BEGIN { printf "%.3f", a / n }') s wall, $(awk -v a="$(col many "$t" 7)" -v n="$many" 'BEGIN { printf "%.3f", a / n }') s cpu; gdb on one core ${g:-n/a} s: $(ratio "$g" "$(awk -v a="$(col many "$t" 3)" -v n="$many" 'BEGIN { print a / n }')") per core"
	done
}
report_lsp() { # faultline serve: faultline.open -> first diagnostic.
	local w
	echo "LSP (faultline serve over stdio): faultline.open -> first diagnostic; cold: a new server, empty index cache; warm: a new server, the cache cold filled; pooled: a second open in the same server"
	for w in $workloads; do
		[[ -f $res/$w.lspcold.out ]] || continue
		echo "  $w: cold $(lsp_ms "$w" lspcold 1) ms, pooled $(lsp_ms "$w" lspcold 2) ms; warm $(lsp_ms "$w" lspwarm 1) ms, pooled $(lsp_ms "$w" lspwarm 2) ms"
	done
}
lsp_ms() { # lsp_ms WORKLOAD NAME N: open N's first diagnostic, ms.
	awk -v n="$3" '$2 == "open" && $3 == n ":" { print $6 }' "$res/$1.$2.out" 2>/dev/null
}
# shellcheck source=bench/heldout/targets.sh
source "$here/heldout/targets.sh"
{
	echo "faultline held-out benchmark: $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), median of $rounds rounds"
	if $needs_unity; then
		echo "libunity.so: $stages template stages in 2 units + $tiny tiny units; DWARF $(dwarf_mib "$dir/libunity.so")"
	fi
	if [[ -n $bigdir ]]; then
		echo "big: bench/gen $biggen, libbig.so DWARF $(dwarf_mib "$bigdir/libbig.so"), core $(du -h --apparent-size "$(core_of big)" | cut -f1)"
	fi
	echo "ratios: the other tool's wall time / this one's (cpu: user+sys seconds, the same ratio in brackets)"
	printf '%-8s %-15s %7s %7s %8s %7s %4s  %-15s %-15s %-15s %s\n' workload tool "wall s" "cpu s" "RSS MiB" frames exit "gdb/this" "eu/this" "lldb/this" "RSS % eu"
	for w in $workloads; do
		g=$(col "$w" gdb 3) e=$(col "$w" eu-stack 3) l=$(col "$w" lldb 3) er=$(col "$w" eu-stack 4)
		gc=$(col "$w" gdb 7) ec=$(col "$w" eu-stack 7) lc=$(col "$w" lldb 7)
		for t in faultline-cold faultline-warm faultline-md $tools; do
			wall=$(col "$w" "$t" 3)
			[[ -n $wall ]] || continue
			rss=$(col "$w" "$t" 4) cpu=$(col "$w" "$t" 7) label=$t
			if [[ $w == many && $t == faultline* ]]; then # per core: the other tools read one
				wall=$(awk -v a="$wall" -v n="$many" 'BEGIN { printf "%.4f", a / n }') cpu=$(awk -v a="$cpu" -v n="$many" 'BEGIN { printf "%.4f", a / n }')
				label=fl${t#faultline}/core
			fi
			printf '%-8s %-15s %7.3f %7.3f %8.1f %7s %4s  %-15s %-15s %-15s %s\n' "$w" "$label" "$wall" "$cpu" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" \
				"$(col "$w" "$t" 6)" "$(col "$w" "$t" 5)" "$(ratio "$g" "$wall") [$(ratio "$gc" "$cpu")]" "$(ratio "$e" "$wall") [$(ratio "$ec" "$cpu")]" \
				"$(ratio "$l" "$wall") [$(ratio "$lc" "$cpu")]" \
				"$(awk -v a="$rss" -v b="$er" 'BEGIN { if (b) printf "%.0f%%", 100 * a / b; else print "n/a" }')"
		done
	done
	report_sparse
	report_many
	report_lsp
	report_targets
} | tee "$summary"

status=0
if [[ " $tools " == *" gdb "* ]]; then
	for w in $workloads; do
		[[ -f $res/$w.gdb.out && $w != many ]] || continue # many: a crash set (go test ./analysis -run ModulePool holds it to single opens)
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
