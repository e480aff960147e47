package rustdemangle

import "unicode/utf8"

// maxPunycodeRunes bounds a decoded identifier.
const maxPunycodeRunes = 4096

// decodePunycode decodes a v0 Punycode identifier (RFC 3492 with "_" for
// the delimiter): the ASCII part, then the insertions encoded in puny.
func decodePunycode(ascii, puny string) (string, bool) {
	const (
		base, tMin, tMax, skew = 36, 1, 26, 38
	)
	out := []rune(ascii)
	damp, bias, i, n := 700, 72, 0, 0x80
	for p := 0; p < len(puny); {
		delta, w := 0, 1
		for k := base; ; k += base {
			if p >= len(puny) {
				return "", false
			}
			c := puny[p]
			p++
			var digit int
			switch {
			case c >= 'a' && c <= 'z':
				digit = int(c - 'a')
			case c >= '0' && c <= '9':
				digit = int(c-'0') + 26
			default:
				return "", false
			}
			if digit > (1<<31-delta)/w {
				return "", false
			}
			delta += digit * w
			t := min(max(k-bias, tMin), tMax)
			if digit < t {
				break
			}
			if w > (1<<31)/(base-t) {
				return "", false
			}
			w *= base - t
		}
		if len(out) >= maxPunycodeRunes {
			return "", false
		}
		length := len(out) + 1
		i += delta
		n += i / length
		i %= length
		if n > utf8.MaxRune || n >= 0xd800 && n < 0xe000 {
			return "", false
		}
		out = append(out, 0)
		copy(out[i+1:], out[i:])
		out[i] = rune(n)
		i++
		// Bias adaptation.
		delta /= damp
		damp = 2
		delta += delta / length
		k := 0
		for delta > ((base-tMin)*tMax)/2 {
			delta /= base - tMin
			k += base
		}
		bias = k + ((base-tMin+1)*delta)/(delta+skew)
	}
	return string(out), true
}
