package job

import (
	"math/bits"
	"strconv"
	"strings"
)

// FormatRanks writes a sorted, duplicate-free rank list as compressed
// ranges: [0 1 2 4 7 8] becomes "0-2,4,7-8".
func FormatRanks(ranks []int) string {
	var b strings.Builder
	for i := 0; i < len(ranks); {
		j := i
		for j+1 < len(ranks) && ranks[j+1] == ranks[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(ranks[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(ranks[j]))
		}
		i = j + 1
	}
	return b.String()
}

// rankSet is a bit set of rank numbers; it grows as ranks are added.
type rankSet []uint64

func (s *rankSet) add(r int) {
	for len(*s) <= r/64 {
		*s = append(*s, 0)
	}
	(*s)[r/64] |= 1 << (uint(r) % 64)
}

// ranks lists the set's ranks in increasing order.
func (s rankSet) ranks() []int {
	var out []int
	for w, word := range s {
		for w64 := word; w64 != 0; w64 &= w64 - 1 {
			out = append(out, w*64+bits.TrailingZeros64(w64))
		}
	}
	return out
}
