package rustdemangle

import (
	"strconv"
	"strings"
)

// constant reads and prints a <const>: a placeholder "p", or an integer,
// bool or char type and its value in hex nibbles ended by "_"; or a
// back-reference.
func (d *v0Demangler) constant() {
	if !d.enter() {
		return
	}
	defer d.leave()
	if d.eat('B') {
		d.atBackref(d.constant)
		return
	}
	tag := d.next()
	switch tag {
	case 'p':
		d.print("_")
		return
	case 'h', 't', 'm', 'y', 'o', 'j':
		d.constUint()
	case 'a', 's', 'l', 'x', 'n', 'i':
		if d.eat('n') {
			d.print("-")
		}
		d.constUint()
	case 'b':
		switch d.hexNibbles() {
		case "0":
			d.print("false")
		case "1":
			d.print("true")
		default:
			d.fail()
		}
	case 'c':
		d.constChar()
	default:
		d.fail()
		return
	}
	if d.verbose {
		d.print(": " + basicTypes[tag])
	}
}

// hexNibbles reads lowercase hex digits up to "_".
func (d *v0Demangler) hexNibbles() string {
	start := d.pos
	for {
		c := d.next()
		if c == '_' {
			return d.sym[start : d.pos-1]
		}
		if _, ok := hexNibble(c); !ok {
			d.fail()
			return ""
		}
	}
}

// constUint prints an integer's value: decimal when it fits in 64 bits,
// else the hex digits after "0x".
func (d *v0Demangler) constUint() {
	h := strings.TrimLeft(d.hexNibbles(), "0")
	if len(h) > 16 {
		d.print("0x" + h)
		return
	}
	v, _ := strconv.ParseUint("0"+h, 16, 64)
	d.decimal(v)
}

// constChar prints a char constant as libiberty does: quoted, with \t \r
// \n \' \\ escaped, other printable ASCII as it is, the rest \u{hex}.
func (d *v0Demangler) constChar() {
	h := d.hexNibbles()
	if len(h) > 8 {
		d.fail()
		return
	}
	v, _ := strconv.ParseUint("0"+h, 16, 32)
	if v > 0x10ffff || v >= 0xd800 && v < 0xe000 {
		d.fail()
		return
	}
	d.print("'")
	switch c := rune(v); {
	case c == '\t':
		d.print(`\t`)
	case c == '\r':
		d.print(`\r`)
	case c == '\n':
		d.print(`\n`)
	case c == '\\' || c == '\'':
		d.print(`\` + string(c))
	case c >= 0x20 && c < 0x7f:
		d.print(string(c))
	default:
		d.print(`\u{` + hex(v) + `}`)
	}
	d.print("'")
}
