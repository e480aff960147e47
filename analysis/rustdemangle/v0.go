package rustdemangle

import (
	"strconv"
	"strings"
)

// v0 demangles a v0 name (RFC 2603, "Rust Symbol Mangling (v0)"):
//
//	<symbol-name> = "_R" [<decimal-number>] <path> [<instantiating-crate>] [<vendor-specific-suffix>]
//
// printed as libiberty's demangle_path does: the path, then the
// instantiating crate parsed and not printed. A vendor suffix (".llvm.…")
// is dropped.
func v0(sym string, o Options) (string, bool) {
	body := sym[2:]
	if i := strings.IndexByte(body, '.'); i >= 0 {
		body = body[:i]
	}
	if body == "" || body[0] < 'A' || body[0] > 'Z' {
		return sym, false
	}
	for i := 0; i < len(body); i++ {
		if !isAlnum(body[i]) && body[i] != '_' {
			return sym, false
		}
	}
	d := &v0Demangler{sym: body, verbose: o.Verbose}
	d.path(true)
	if !d.failed && d.pos < len(d.sym) {
		// The instantiating crate: parsed, not printed.
		d.skipping++
		d.path(false)
		d.skipping--
	}
	if d.failed || d.pos != len(d.sym) || d.out.overflow {
		return sym, false
	}
	return d.out.b.String(), true
}

// v0Demangler reads a v0 name and prints it as it goes. The first error
// sticks: failed stops every reader.
type v0Demangler struct {
	sym     string
	pos     int
	out     output
	verbose bool
	failed  bool
	depth   int
	steps   int
	// skipping counts the enclosing parts that are parsed and not printed
	// (an impl's own path, the instantiating crate).
	skipping int
	// boundLifetimes is how many lifetimes the enclosing binders bound.
	boundLifetimes uint64
}

func (d *v0Demangler) fail() { d.failed = true }

func (d *v0Demangler) print(s string) {
	if d.skipping == 0 && !d.failed {
		d.out.str(s)
		if d.out.overflow {
			d.fail() // too long: stop reading too
		}
	}
}

func (d *v0Demangler) peek() byte {
	if d.failed || d.pos >= len(d.sym) {
		return 0
	}
	return d.sym[d.pos]
}

func (d *v0Demangler) next() byte {
	c := d.peek()
	if c == 0 {
		d.fail()
		return 0
	}
	d.pos++
	return c
}

func (d *v0Demangler) eat(c byte) bool {
	if d.peek() == c {
		d.pos++
		return true
	}
	return false
}

// enter counts one level of nesting; false (and failed) past maxDepth or
// past maxSteps levels entered in all (back-references to parts that
// print nothing could otherwise be followed exponentially often).
func (d *v0Demangler) enter() bool {
	d.depth++
	d.steps++
	if d.depth > maxDepth || d.steps > maxSteps {
		d.fail()
	}
	return !d.failed
}

func (d *v0Demangler) leave() { d.depth-- }

// integer62 reads <base-62-number>: "_" is 0, else digits then "_", plus 1.
func (d *v0Demangler) integer62() uint64 {
	if d.eat('_') {
		return 0
	}
	var x uint64
	for !d.eat('_') {
		c := d.next()
		var v uint64
		switch {
		case isDigit(c):
			v = uint64(c - '0')
		case c >= 'a' && c <= 'z':
			v = uint64(c-'a') + 10
		case c >= 'A' && c <= 'Z':
			v = uint64(c-'A') + 36
		default:
			d.fail()
			return 0
		}
		if x > (^uint64(0)-v)/62 {
			d.fail()
			return 0
		}
		x = x*62 + v
	}
	if x == ^uint64(0) {
		d.fail()
		return 0
	}
	return x + 1
}

// optInteger62 reads [tag <base-62-number>]: 0 when absent, else the
// number plus 1.
func (d *v0Demangler) optInteger62(tag byte) uint64 {
	if !d.eat(tag) {
		return 0
	}
	x := d.integer62()
	if x == ^uint64(0) {
		d.fail()
		return 0
	}
	return x + 1
}

// disambiguator reads <disambiguator> = "s" <base-62-number>.
func (d *v0Demangler) disambiguator() uint64 { return d.optInteger62('s') }

// ident is an <identifier>: its ASCII part and, for a Punycode one
// ("u" prefix), the encoded part after the last "_".
type ident struct {
	ascii, punycode string
}

func (id ident) empty() bool { return id.ascii == "" && id.punycode == "" }

// ident reads <identifier> = [<disambiguator>] <undisambiguated-identifier>
// without the disambiguator: ["u"] <decimal-number> ["_"] <bytes>.
func (d *v0Demangler) ident() ident {
	puny := d.eat('u')
	c := d.next()
	if !isDigit(c) {
		d.fail()
		return ident{}
	}
	n := int(c - '0')
	if n != 0 {
		for isDigit(d.peek()) {
			n = n*10 + int(d.next()-'0')
			if n > len(d.sym) {
				d.fail()
				return ident{}
			}
		}
	}
	d.eat('_')
	if n > len(d.sym)-d.pos {
		d.fail()
		return ident{}
	}
	s := d.sym[d.pos : d.pos+n]
	d.pos += n
	if !puny {
		return ident{ascii: s}
	}
	id := ident{punycode: s}
	if i := strings.LastIndexByte(s, '_'); i >= 0 {
		id = ident{ascii: s[:i], punycode: s[i+1:]}
	}
	if id.punycode == "" {
		d.fail()
	}
	return id
}

// printIdent writes an identifier, its Punycode part decoded.
func (d *v0Demangler) printIdent(id ident) {
	if id.punycode == "" {
		d.print(id.ascii)
		return
	}
	s, ok := decodePunycode(id.ascii, id.punycode)
	if !ok {
		d.fail()
		return
	}
	d.print(s)
}

// backref reads <backref> = "B" <base-62-number> (the B already read)
// and returns where it points: strictly before the B, or fails.
func (d *v0Demangler) backref() (int, bool) {
	at := d.pos - 1
	i := d.integer62()
	if d.failed || i >= uint64(at) {
		d.fail()
		return 0, false
	}
	return int(i), true
}

// atBackref runs f with the reader moved to a back-reference's target,
// then restores it. While nothing is printed, the target is not read
// again (it was checked when first read), which keeps skipping linear.
func (d *v0Demangler) atBackref(f func()) {
	target, ok := d.backref()
	if !ok || d.skipping > 0 || !d.enter() {
		return
	}
	saved := d.pos
	d.pos = target
	f()
	d.pos = saved
	d.leave()
}

// decimal writes n in decimal.
func (d *v0Demangler) decimal(n uint64) { d.print(strconv.FormatUint(n, 10)) }
