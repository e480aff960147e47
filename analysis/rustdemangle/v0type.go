package rustdemangle

// basicTypes are the one-letter <basic-type>s.
var basicTypes = map[byte]string{
	'a': "i8", 'b': "bool", 'c': "char", 'd': "f64", 'e': "str", 'f': "f32",
	'h': "u8", 'i': "isize", 'j': "usize", 'l': "i32", 'm': "u32", 'n': "i128",
	'o': "u128", 's': "i16", 't': "u16", 'u': "()", 'v': "...", 'x': "i64",
	'y': "u64", 'z': "!", 'p': "_",
}

// typ reads and prints a <type>:
//
//	<type> = <basic-type> | <path>
//	       | "A" <type> <const>   // [T; N]       | "S" <type>  // [T]
//	       | "T" {<type>} "E"     // (T1, T2)
//	       | "R" [<lifetime>] <type> | "Q" [<lifetime>] <type>  // &T, &mut T
//	       | "P" <type> | "O" <type>                            // *const T, *mut T
//	       | "F" <fn-sig> | "D" <dyn-bounds> <lifetime> | <backref>
func (d *v0Demangler) typ() {
	tag := d.next()
	if t, ok := basicTypes[tag]; ok {
		d.print(t)
		return
	}
	if !d.enter() {
		return
	}
	defer d.leave()
	switch tag {
	case 'R', 'Q':
		d.print("&")
		if d.eat('L') {
			if lt := d.integer62(); lt != 0 {
				d.lifetime(lt)
				d.print(" ")
			}
		}
		if tag == 'Q' {
			d.print("mut ")
		}
		d.typ()
	case 'P':
		d.print("*const ")
		d.typ()
	case 'O':
		d.print("*mut ")
		d.typ()
	case 'A', 'S':
		d.print("[")
		d.typ()
		if tag == 'A' {
			d.print("; ")
			d.constant()
		}
		d.print("]")
	case 'T':
		d.print("(")
		if d.list(d.typ, ", ") == 1 {
			d.print(",")
		}
		d.print(")")
	case 'F':
		d.fnSig()
	case 'D':
		d.dynType()
	case 'B':
		d.atBackref(d.typ)
	default:
		d.pos-- // the tag starts a path
		d.path(false)
	}
}

// fnSig reads <fn-sig> = [<binder>] ["U"] ["K" <abi>] {<type>} "E" <type>.
func (d *v0Demangler) fnSig() {
	bound := d.binder()
	defer d.unbind(bound)
	if d.eat('U') {
		d.print("unsafe ")
	}
	if d.eat('K') {
		abi := "C"
		if !d.eat('C') {
			id := d.ident()
			if id.ascii == "" || id.punycode != "" {
				d.fail()
				return
			}
			abi = id.ascii
		}
		// A "-" in the ABI's name was mangled as "_".
		d.print(`extern "` + replaceByte(abi, '_', '-') + `" `)
	}
	d.print("fn(")
	d.list(d.typ, ", ")
	d.print(")")
	if !d.eat('u') {
		d.print(" -> ")
		d.typ()
	}
}

// dynType reads <dyn-bounds> <lifetime> (the D read):
// [<binder>] {<dyn-trait>} "E", then "L" <lifetime>.
func (d *v0Demangler) dynType() {
	d.print("dyn ")
	bound := d.binder()
	d.list(d.dynTrait, " + ")
	d.unbind(bound)
	if !d.eat('L') {
		d.fail()
		return
	}
	if lt := d.integer62(); lt != 0 {
		d.print(" + ")
		d.lifetime(lt)
	}
}

// dynTrait reads <dyn-trait> = <path> {"p" <undisambiguated-identifier> <type>}:
// the associated type bindings print inside the trait's <…>.
func (d *v0Demangler) dynTrait() {
	open := d.pathOpenGenerics()
	for !d.failed && d.eat('p') {
		if open {
			d.print(", ")
		} else {
			d.print("<")
			open = true
		}
		d.printIdent(d.ident())
		d.print(" = ")
		d.typ()
	}
	if open {
		d.print(">")
	}
}

// pathOpenGenerics prints a path, leaving the <…> of its generic
// arguments open (true) when it has them.
func (d *v0Demangler) pathOpenGenerics() bool {
	if !d.enter() {
		return false
	}
	defer d.leave()
	switch {
	case d.eat('B'):
		open := false
		d.atBackref(func() { open = d.pathOpenGenerics() })
		return open
	case d.eat('I'):
		d.path(false)
		d.print("<")
		d.list(d.genericArg, ", ")
		return true
	}
	d.path(false)
	return false
}

func replaceByte(s string, from, to byte) string {
	b := []byte(s)
	for i := range b {
		if b[i] == from {
			b[i] = to
		}
	}
	return string(b)
}
