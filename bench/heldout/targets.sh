# targets.sh: issue 25's table, sourced by bench/heldout.sh after its runs:
# for the small, torch and big workloads, faultline cold and warm against
# gdb and eu-stack -i -s (medians of the rounds, wall seconds and peak
# RSS), the ratios, the LSP's open -> first diagnostic, and each target
# marked met or missed:
#   cold   faster than eu-stack; >= x10 gdb (>= x5 on small)
#   warm   >= x30 gdb; <= 30 ms on small
#   RSS    <= gdb's / 3 and <= 1.25 x eu-stack's (cold and warm)
#   LSP    <= 300 ms cold, <= 100 ms warm
# Uses heldout.sh's col, lsp_ms, res and workloads.

# mark COND: "met" or "MISSED" for an awk condition over the given values.
mark() { # mark "expr" var=value...
	local expr=$1
	shift
	awk "$@" "BEGIN { if ($expr) print \"met\"; else print \"MISSED\" }"
}

report_targets() {
	local w rows=0
	for w in small torch big; do [[ " $workloads " == *" $w "* && -n $(col "$w" faultline-cold 3) ]] && rows=$((rows + 1)); done
	((rows > 0)) || return 0
	echo
	echo "issue 25 (wall s, peak RSS MiB; medians of $rounds rounds):"
	printf '%-6s | %-16s | %-16s | %-16s | %-16s | %-22s | %-12s | %s\n' workload "faultline cold" warm gdb "eu-stack -i -s" "cold vs gdb, vs eu" "warm vs gdb" "LSP cold / warm ms"
	for w in small torch big; do
		[[ " $workloads " == *" $w "* && -n $(col "$w" faultline-cold 3) ]] || continue
		target_row "$w"
	done
	for w in small torch big; do
		[[ " $workloads " == *" $w "* && -n $(col "$w" faultline-cold 3) ]] || continue
		target_marks "$w"
	done
}

# cell TIME RSS: "0.123 s, 45 MiB".
cell() { awk -v t="$1" -v r="$2" 'BEGIN { if (t == "") print "n/a"; else printf "%.3f s, %.0f MiB", t, r / 1024 }'; }

target_row() {
	local w=$1 c cr wm wr g gr e er
	c=$(col "$w" faultline-cold 3) cr=$(col "$w" faultline-cold 4)
	wm=$(col "$w" faultline-warm 3) wr=$(col "$w" faultline-warm 4)
	g=$(col "$w" gdb 3) gr=$(col "$w" gdb 4) e=$(col "$w" eu-stack 3) er=$(col "$w" eu-stack 4)
	printf '%-6s | %-16s | %-16s | %-16s | %-16s | %-22s | %-12s | %s\n' "$w" "$(cell "$c" "$cr")" "$(cell "$wm" "$wr")" \
		"$(cell "$g" "$gr")" "$(cell "$e" "$er")" "$(ratio "$g" "$c"), $(ratio "$e" "$c")" "$(ratio "$g" "$wm")" \
		"$(lsp_ms "$w" lspcold 1) / $(lsp_ms "$w" lspwarm 1)"
}

target_marks() {
	local w=$1 c wm g e cr wr gr er lc lw gx=10
	c=$(col "$w" faultline-cold 3) wm=$(col "$w" faultline-warm 3) g=$(col "$w" gdb 3) e=$(col "$w" eu-stack 3)
	cr=$(col "$w" faultline-cold 4) wr=$(col "$w" faultline-warm 4) gr=$(col "$w" gdb 4) er=$(col "$w" eu-stack 4)
	lc=$(lsp_ms "$w" lspcold 1) lw=$(lsp_ms "$w" lspwarm 1)
	[[ $w == small ]] && gx=5
	local marks=()
	[[ -n $e ]] && marks+=("cold faster than eu-stack: $(mark 'c < e' -v c="$c" -v e="$e")")
	[[ -n $g ]] && marks+=("cold >= x$gx gdb: $(mark 'g >= x * c' -v g="$g" -v c="$c" -v x="$gx")")
	[[ -n $g ]] && marks+=("warm >= x30 gdb: $(mark 'g >= 30 * wm' -v g="$g" -v wm="$wm")")
	[[ $w == small ]] && marks+=("warm <= 30 ms: $(mark 'wm <= 0.030' -v wm="$wm")")
	[[ -n $gr ]] && marks+=("RSS <= gdb/3: $(mark 'cr * 3 <= gr && wr * 3 <= gr' -v cr="$cr" -v wr="$wr" -v gr="$gr")")
	[[ -n $er ]] && marks+=("RSS <= 1.25 x eu-stack: $(mark 'cr <= 1.25 * er && wr <= 1.25 * er' -v cr="$cr" -v wr="$wr" -v er="$er")")
	[[ -n $lc ]] && marks+=("LSP cold <= 300 ms: $(mark 'lc <= 300' -v lc="$lc")")
	[[ -n $lw ]] && marks+=("LSP warm <= 100 ms: $(mark 'lw <= 100' -v lw="$lw")")
	local IFS=';'
	echo "  $w: ${marks[*]}" | sed 's/;/; /g'
}
