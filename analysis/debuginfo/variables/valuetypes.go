package variables

import (
	"debug/dwarf"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfreader"
)

// Types of values (DWARF 5 §5) reduced to what printing a value needs, and
// the printing itself, in gdb's style (`info args`, `info locals`).

// Base type encodings (DWARF 5 §7.8, Table 7.11).
const (
	ateAddress      = 0x01
	ateBoolean      = 0x02
	ateFloat        = 0x04
	ateSigned       = 0x05
	ateSignedChar   = 0x06
	ateUnsigned     = 0x07
	ateUnsignedChar = 0x08
	ateUTF          = 0x10
)

type typeKind uint8

const (
	kindUnknown typeKind = iota
	kindVoid
	kindBase
	kindPointer
	kindReference
	kindStruct
	kindEnum
	kindArray
	kindFunc
)

// valueType is a variable's type, with qualifiers and typedefs resolved
// for printing but kept in its name.
type valueType struct {
	name   string // C/C++ spelling
	kind   typeKind
	size   int64
	enc    int64
	target *valueType // pointee, element
	enums  map[int64]string
	die    uint64 // the struct, class or union DIE (members are its children)
	union  bool
}

// maxTypeDepth bounds the chain of type DIEs one type follows.
const maxTypeDepth = 16

// readType reads the type at .debug_info offset off.
func readType(df *dwarfreader.DwarfFile, off uint64, cache map[int]*UnitCtx, cplus bool, depth int) *valueType {
	if off == 0 {
		return &valueType{name: "void", kind: kindVoid}
	}
	if depth > maxTypeDepth {
		return &valueType{name: "?", kind: kindUnknown}
	}
	uc, err := UnitCtxAt(df, off, cache)
	if err != nil {
		return &valueType{name: "?", kind: kindUnknown}
	}
	va, _, ok := uc.ReadDIE(off)
	if !ok {
		return &valueType{name: "?", kind: kindUnknown}
	}
	name := df.Str(va.name)
	switch va.tag {
	case dwarf.TagBaseType:
		return &valueType{name: name, kind: kindBase, size: va.byteSize, enc: va.encoding}
	case dwarf.TagUnspecifiedType:
		return &valueType{name: name, kind: kindVoid}
	case dwarf.TagPointerType, dwarf.TagReferenceType, dwarf.TagRvalueReferenceType, dwarf.TagPtrToMemberType:
		return pointerType(&va, readType(df, va.typ, cache, cplus, depth+1), uc.u.Asize)
	case dwarf.TagConstType, dwarf.TagVolatileType, dwarf.TagRestrictType, dwarf.TagAtomicType:
		return qualifiedType(va.tag, readType(df, va.typ, cache, cplus, depth+1))
	case dwarf.TagTypedef:
		t := readType(df, va.typ, cache, cplus, depth+1)
		c := *t
		c.name = name
		return &c
	case dwarf.TagStructType, dwarf.TagClassType, dwarf.TagUnionType:
		if !cplus {
			kw := map[dwarf.Tag]string{dwarf.TagStructType: "struct", dwarf.TagClassType: "class", dwarf.TagUnionType: "union"}[va.tag]
			if name == "" {
				name = "{...}"
			}
			name = kw + " " + name
		}
		return &valueType{name: name, kind: kindStruct, size: va.byteSize, die: off, union: va.tag == dwarf.TagUnionType}
	case dwarf.TagEnumerationType:
		return enumType(df, uc, off, &va, name, cache, cplus, depth)
	case dwarf.TagArrayType:
		el := readType(df, va.typ, cache, cplus, depth+1)
		n := uc.arrayCount(off)
		dim := "[]"
		if n >= 0 {
			dim = fmt.Sprintf("[%d]", n)
		}
		return &valueType{name: el.name + " " + dim, kind: kindArray, size: max(n, 0) * el.size, target: el}
	case dwarf.TagSubroutineType:
		ret := readType(df, va.typ, cache, cplus, depth+1)
		return &valueType{name: ret.name + " (...)", kind: kindFunc}
	}
	return &valueType{name: name, kind: kindUnknown, size: va.byteSize}
}

// pointerType is a pointer, reference or pointer to member (DIE va) to t
// in a unit of address size asize.
func pointerType(va *varAttrs, t *valueType, asize int) *valueType {
	size := va.byteSize
	if size == 0 {
		size = int64(asize)
	}
	kind, suffix := kindPointer, "*"
	switch va.tag {
	case dwarf.TagReferenceType:
		kind, suffix = kindReference, "&"
	case dwarf.TagRvalueReferenceType:
		kind, suffix = kindReference, "&&"
	}
	n := t.name + " " + suffix
	if t.kind == kindPointer || t.kind == kindReference {
		n = t.name + suffix
	}
	return &valueType{name: n, kind: kind, size: size, target: t}
}

// qualifiedType is t with the qualifier of tag (const, volatile, restrict,
// _Atomic) in its name, written after a pointer or reference.
func qualifiedType(tag dwarf.Tag, t *valueType) *valueType {
	q := map[dwarf.Tag]string{dwarf.TagConstType: "const", dwarf.TagVolatileType: "volatile",
		dwarf.TagRestrictType: "restrict", dwarf.TagAtomicType: "_Atomic"}[tag]
	c := *t
	if t.kind == kindPointer || t.kind == kindReference {
		c.name = t.name + " " + q
	} else {
		c.name = q + " " + t.name
	}
	return &c
}

// enumType is the enumeration type at off (DIE va) with its enumerators
// and the encoding of its underlying type.
func enumType(df *dwarfreader.DwarfFile, uc *UnitCtx, off uint64, va *varAttrs, name string, cache map[int]*UnitCtx, cplus bool, depth int) *valueType {
	t := &valueType{name: name, kind: kindEnum, size: va.byteSize, enums: map[int64]string{}}
	if !cplus {
		t.name = "enum " + name
	}
	if va.typ != 0 {
		if u := readType(df, va.typ, cache, cplus, depth+1); u.kind == kindBase {
			t.enc = u.enc
		}
	}
	uc.enumerators(off, t.enums)
	return t
}

// enumerators reads the enumerators of the enumeration type at off.
func (uc *UnitCtx) enumerators(off uint64, out map[int64]string) {
	uc.eachChild(off, func(va *varAttrs) {
		if va.tag == dwarf.TagEnumerator && va.hasConst && len(out) < 4096 {
			out[va.constValue()] = uc.df.Str(va.name)
		}
	})
}

// arrayCount is the element count of the first dimension of the array
// type at off, -1 if unknown.
func (uc *UnitCtx) arrayCount(off uint64) int64 {
	n := int64(-1)
	uc.eachChild(off, func(va *varAttrs) {
		if va.tag == dwarf.TagSubrangeType && n < 0 && va.hasCount {
			n = va.count
		}
	})
	return n
}

// eachChild calls fn for each direct child DIE of the DIE at off.
func (uc *UnitCtx) eachChild(off uint64, fn func(*varAttrs)) {
	r := uc.reader(off)
	a := uc.ud.Tab.Lookup(r.Uleb())
	if r.Bad || a == nil || !a.Children {
		return
	}
	r.SkipAttrs(a, uc.u.Off)
	for n := 0; !r.Bad && n < 1<<16; n++ {
		code := r.Uleb()
		if r.Bad || code == 0 {
			return
		}
		a := uc.ud.Tab.Lookup(code)
		if a == nil {
			return
		}
		var va varAttrs
		uc.readVarAttrs(r, a, &va)
		if r.Bad {
			return
		}
		fn(&va)
		if a.Children {
			r.SkipChildren(uc.ud.Tab, 0, uc.u.Off)
		}
	}
}

// constValue is an integer DW_AT_const_value.
func (va *varAttrs) constValue() int64 {
	if va.constIsInt {
		return va.constInt
	}
	if len(va.constVal) > 0 && len(va.constVal) <= 8 {
		return int64(decodeUint(va.constVal, binary.LittleEndian))
	}
	return 0
}

// CPlusPlus reports whether a DW_AT_language is a C++ dialect.
func CPlusPlus(lang int64) bool {
	switch lang {
	case 0x04, 0x1a, 0x21, 0x2b: // C_plus_plus, _03, _11, _14
		return true
	}
	return false
}

// maxStringPreview is how many bytes of a char * gdb-style printing reads
// (gdb's default `print elements` is 200).
const maxStringPreview = 200

// formatScalar prints the value in b (the type's size, at most 8 bytes) as
// gdb does; mem reads the string a char pointer points to.
func formatScalar(t *valueType, b []byte, bo binary.ByteOrder, mem func(addr uint64, b []byte) (int, error)) string {
	u := decodeUint(b, bo)
	switch t.kind {
	case kindPointer:
		s := fmt.Sprintf("0x%x", u)
		if t.target != nil && t.target.kind == kindBase && t.target.size == 1 && isCharEnc(t.target.enc) && u != 0 && mem != nil {
			s += " " + readCString(u, mem)
		}
		return s
	case kindReference:
		return fmt.Sprintf("@0x%x", u)
	case kindEnum:
		v := signExtend(u, len(b))
		if t.enc == ateUnsigned || t.enc == ateUnsignedChar {
			v = int64(u)
		}
		if n, ok := t.enums[v]; ok {
			return n
		}
		return strconv.FormatInt(v, 10)
	case kindBase:
		switch t.enc {
		case ateBoolean:
			switch u {
			case 0:
				return "false"
			case 1:
				return "true"
			}
			return strconv.FormatUint(u, 10)
		case ateFloat:
			switch len(b) {
			case 4:
				return strconv.FormatFloat(float64(math.Float32frombits(uint32(u))), 'g', 9, 32)
			case 8:
				return strconv.FormatFloat(math.Float64frombits(u), 'g', 17, 64)
			}
		case ateSigned:
			return strconv.FormatInt(signExtend(u, len(b)), 10)
		case ateUnsigned, ateAddress, ateUTF:
			return strconv.FormatUint(u, 10)
		case ateSignedChar:
			v := signExtend(u, len(b))
			return strconv.FormatInt(v, 10) + " " + charLiteral(byte(u))
		case ateUnsignedChar:
			return strconv.FormatUint(u, 10) + " " + charLiteral(byte(u))
		}
	}
	return fmt.Sprintf("0x%x", u)
}

func isCharEnc(enc int64) bool {
	return enc == ateSignedChar || enc == ateUnsignedChar
}

func signExtend(u uint64, size int) int64 {
	if size <= 0 || size >= 8 {
		return int64(u)
	}
	shift := uint(64 - 8*size)
	return int64(u<<shift) >> shift
}

// charLiteral is c as gdb quotes a char: 'A', '\n', '\000', '\377'.
func charLiteral(c byte) string {
	return "'" + escapeChar(c, '\'') + "'"
}

func escapeChar(c byte, quote byte) string {
	switch c {
	case '\a':
		return `\a`
	case '\b':
		return `\b`
	case '\f':
		return `\f`
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	case '\v':
		return `\v`
	case 033:
		return `\033`
	case '\\':
		return `\\`
	case quote:
		return `\` + string(quote)
	}
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf(`\%03o`, c)
	}
	return string(c)
}

// readCString reads the NUL-terminated string at addr, quoted as gdb does
// ("abc", or "abc"... when longer than maxStringPreview), or gdb's error
// text when it cannot be read.
func readCString(addr uint64, mem func(addr uint64, b []byte) (int, error)) string {
	var sb strings.Builder
	sb.WriteByte('"')
	buf := make([]byte, 64)
	n := 0
	for n < maxStringPreview {
		k, _ := mem(addr+uint64(n), buf[:min(len(buf), maxStringPreview-n)])
		if k == 0 {
			if n == 0 {
				return fmt.Sprintf("<error: Cannot access memory at address 0x%x>", addr)
			}
			break
		}
		for _, c := range buf[:k] {
			if c == 0 {
				sb.WriteByte('"')
				return sb.String()
			}
			sb.WriteString(escapeChar(c, '"'))
			n++
		}
	}
	sb.WriteString(`"...`)
	return sb.String()
}
