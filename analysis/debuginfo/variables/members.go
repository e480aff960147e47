package variables

import (
	"debug/dwarf"
	"encoding/binary"
	"fmt"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfreader"
)

// Members of structs, unions and classes (DWARF 5 §5.7.6: DW_TAG_member
// and DW_TAG_inheritance children with DW_AT_data_member_location),
// elements of arrays, and the members behind a pointer, read from memory
// for debuggers' expandable values.

// Caps on what one value expands to.
const (
	maxMembers     = 256 // members (or elements) of one value
	maxArrayElems  = 100 // elements of an array listed
	maxMemberDepth = 4   // nested expansions below a variable
	// maxFrameMembers caps the members read for all of one frame's values.
	maxFrameMembers = 4096
)

// dwOpPlusUconst is DW_OP_plus_uconst (DWARF 5 §2.5.1.4), the form DWARF
// 2 producers use for DW_AT_data_member_location.
const dwOpPlusUconst = 0x23

// plusUconst reads a data member location expression "DW_OP_plus_uconst N".
func plusUconst(b []byte) (int64, bool) {
	if len(b) < 2 || b[0] != dwOpPlusUconst {
		return 0, false
	}
	r := dwarfreader.DieReader{B: b, Pos: 1, End: len(b)}
	n := r.Uleb()
	if r.Bad || n > 1<<40 {
		return 0, false
	}
	return int64(n), true
}

// expand fills v's Addr and Members for a value of type t at location l.
func (ev *ValueEval) expand(v *Value, t *valueType, l location, depth int) {
	switch t.kind {
	case kindStruct, kindArray:
		if l.kind == locMemory {
			v.Addr = l.addr
			v.Members = ev.children(t, l.addr, depth)
		}
	case kindPointer, kindReference:
		p, ok := ev.pointer(t, l)
		if !ok || p == 0 {
			return
		}
		v.Addr = p
		if t.target == nil || t.target.kind != kindStruct || depth >= maxMemberDepth {
			return
		}
		var probe [1]byte
		if n, err := ev.Fs.ReadMemory(p, probe[:]); err != nil || n < 1 {
			return // NULL-like or unmapped: nothing behind it to list
		}
		v.Members = ev.children(t.target, p, depth+1)
		if t.kind == kindPointer {
			for i := range v.Members {
				v.Members[i].ViaPointer = true
			}
		}
	}
}

// pointer reads a pointer's value at l.
func (ev *ValueEval) pointer(t *valueType, l location) (uint64, bool) {
	size := int(t.size)
	if size <= 0 || size > 8 {
		return 0, false
	}
	switch l.kind {
	case locRegister:
		return l.val, true
	case locMemory:
		b := make([]byte, 8)
		if n, err := ev.Fs.ReadMemory(l.addr, b[:size]); err != nil || n < size {
			return 0, false
		}
		return readUint(b[:size], ev.Df.Bo), true
	case locImplicit:
		if len(l.bytes) < size {
			return 0, false
		}
		return readUint(l.bytes[:size], ev.Df.Bo), true
	}
	return 0, false
}

func readUint(b []byte, bo binary.ByteOrder) uint64 {
	var buf [8]byte
	if bo.String() == "BigEndian" {
		copy(buf[8-len(b):], b)
	} else {
		copy(buf[:], b)
	}
	return bo.Uint64(buf[:])
}

// children lists the members of a struct or the elements of an array at addr.
func (ev *ValueEval) children(t *valueType, addr uint64, depth int) []Value {
	if depth >= maxMemberDepth || ev.members >= maxFrameMembers {
		return nil
	}
	if t.kind == kindArray {
		return ev.elements(t, addr, depth)
	}
	if t.die == 0 {
		return nil
	}
	uc, err := UnitCtxAt(ev.Df, t.die, ev.Cache)
	if err != nil {
		return nil
	}
	var out []Value
	uc.eachChild(t.die, func(va *varAttrs) {
		if len(out) >= maxMembers || (va.tag != dwarf.TagMember && va.tag != dwarf.TagInheritance) {
			return
		}
		off := va.memberOff
		if !va.hasMemberOff && !t.union {
			return // a static member: not stored in the object
		}
		mt := readType(ev.Df, va.typ, ev.Cache, ev.Cplus, 0)
		name := ev.Df.Str(va.name)
		if va.tag == dwarf.TagInheritance {
			name = "<" + mt.name + ">"
		}
		if va.bitField {
			out = append(out, Value{Name: name, Type: mt.name, Text: "<bit-field>"})
			return
		}
		out = append(out, ev.memberValue(name, mt, addr+uint64(off), depth))
	})
	return out
}

// elements lists an array's first elements.
func (ev *ValueEval) elements(t *valueType, addr uint64, depth int) []Value {
	el := t.target
	if el == nil || el.size <= 0 {
		return nil
	}
	n := min(t.size/el.size, maxArrayElems)
	out := make([]Value, 0, n)
	for i := int64(0); i < n; i++ {
		out = append(out, ev.memberValue(fmt.Sprintf("[%d]", i), el, addr+uint64(i*el.size), depth))
	}
	return out
}

// memberValue is the value of type t stored at addr.
func (ev *ValueEval) memberValue(name string, t *valueType, addr uint64, depth int) Value {
	ev.members++
	l := location{kind: locMemory, addr: addr}
	v := Value{Name: name, Type: t.name, Text: ev.format(t, l)}
	ev.expand(&v, t, l, depth+1)
	return v
}
