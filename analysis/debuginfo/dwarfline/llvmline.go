package dwarfline

// LlvmRowAt finds pc's row in rows (sequences in program order, each
// ended by an end_sequence row).
func LlvmRowAt(rows []lineRow, pc uint64) (lineRow, bool) {
	start := 0
	for i, r := range rows {
		if !r.endSeq {
			continue
		}
		seq := rows[start : i+1]
		start = i + 1
		if len(seq) < 2 || seq[0].Addr == 0 || pc < seq[0].Addr || pc >= r.Addr {
			continue
		}
		best := -1
		for k, row := range seq[:len(seq)-1] {
			if row.Addr <= pc {
				best = k
			}
		}
		if best >= 0 {
			return seq[best], true
		}
	}
	return lineRow{}, false
}
