package rustdemangle

// path reads and prints a <path>. inValue says the path names a value
// (a function, a static), whose generic arguments print as "::<…>".
//
//	<path> = "C" <identifier>                    // crate root
//	       | "M" <impl-path> <type>              // <T>
//	       | "X" <impl-path> <type> <path>       // <T as Trait>
//	       | "Y" <type> <path>                   // <T as Trait>
//	       | "N" <namespace> <path> <identifier> // ...::ident
//	       | "I" <path> {<generic-arg>} "E"      // ...<T, U>
//	       | <backref>
func (d *v0Demangler) path(inValue bool) {
	if !d.enter() {
		return
	}
	defer d.leave()
	switch tag := d.next(); tag {
	case 'C':
		dis := d.disambiguator()
		d.printIdent(d.ident())
		if d.verbose {
			d.print("[" + hex(dis) + "]")
		}
	case 'N':
		d.nestedPath(inValue)
	case 'M', 'X', 'Y':
		if tag != 'Y' {
			// The impl's own path is parsed and not printed.
			d.disambiguator()
			d.skipping++
			d.path(inValue)
			d.skipping--
		}
		d.print("<")
		d.typ()
		if tag != 'M' {
			d.print(" as ")
			d.path(false)
		}
		d.print(">")
	case 'I':
		d.path(inValue)
		if inValue {
			d.print("::")
		}
		d.print("<")
		d.list(d.genericArg, ", ")
		d.print(">")
	case 'B':
		d.atBackref(func() { d.path(inValue) })
	default:
		d.fail()
	}
}

// nestedPath reads "N" <namespace> <path> <identifier> (the N read). An
// uppercase namespace is a special one, printed "::{closure#0}",
// "::{shim:vtable#0}"; a lowercase one is "::ident".
func (d *v0Demangler) nestedPath(inValue bool) {
	ns := d.next()
	if !(ns >= 'a' && ns <= 'z' || ns >= 'A' && ns <= 'Z') {
		d.fail()
		return
	}
	d.path(inValue)
	dis := d.disambiguator()
	name := d.ident()
	if ns >= 'a' && ns <= 'z' {
		if !name.empty() {
			d.print("::")
			d.printIdent(name)
		}
		return
	}
	d.print("::{")
	switch ns {
	case 'C':
		d.print("closure")
	case 'S':
		d.print("shim")
	default:
		d.print(string(ns))
	}
	if !name.empty() {
		d.print(":")
		d.printIdent(name)
	}
	d.print("#")
	d.decimal(dis)
	d.print("}")
}

// list reads elements with f until "E", printing sep between them, and
// returns how many it read.
func (d *v0Demangler) list(f func(), sep string) int {
	n := 0
	for !d.failed && !d.eat('E') {
		if n > 0 {
			d.print(sep)
		}
		f()
		n++
	}
	return n
}

// genericArg reads <generic-arg> = <lifetime> | <type> | "K" <const>.
func (d *v0Demangler) genericArg() {
	switch {
	case d.eat('L'):
		d.lifetime(d.integer62())
	case d.eat('K'):
		d.constant()
	default:
		d.typ()
	}
}

// lifetime prints the lifetime of a de Bruijn index: 0 is '_, 1 the
// innermost bound one ('a for the outermost binder's first).
func (d *v0Demangler) lifetime(i uint64) {
	if i == 0 {
		d.print("'_")
		return
	}
	if i > d.boundLifetimes {
		d.fail()
		return
	}
	depth := d.boundLifetimes - i
	if depth < 26 {
		d.print("'" + string(rune('a'+depth)))
		return
	}
	d.print("'_")
	d.decimal(depth)
}

// binder reads [<binder>] = "G" <base-62-number> and prints "for<'a, …> "
// for the lifetimes it binds; the caller undoes it with unbind.
func (d *v0Demangler) binder() uint64 {
	n := d.optInteger62('G')
	if n > 1<<16 {
		d.fail() // more lifetimes than any name could use
		return 0
	}
	if n == 0 {
		return 0
	}
	d.print("for<")
	for i := uint64(0); i < n && !d.failed; i++ {
		if i > 0 {
			d.print(", ")
		}
		d.boundLifetimes++
		d.lifetime(1)
	}
	d.print("> ")
	return n
}

func (d *v0Demangler) unbind(n uint64) { d.boundLifetimes -= n }

const hexDigits = "0123456789abcdef"

// hex writes n in lowercase hex, as libiberty prints disambiguators.
func hex(n uint64) string {
	if n == 0 {
		return "0"
	}
	var b [16]byte
	i := len(b)
	for ; n > 0; n >>= 4 {
		i--
		b[i] = hexDigits[n&15]
	}
	return string(b[i:])
}
