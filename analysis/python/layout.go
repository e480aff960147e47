package python

import (
	"encoding/binary"
	"fmt"
)

// layout holds the offsets of the CPython structures that a stack walk
// reads, for one interpreter version (x86-64, a release build).
type layout struct {
	version uint64 // PY_VERSION_HEX

	runtimeInterpretersHead uint64 // _PyRuntimeState.interpreters.head
	interpNext              uint64 // PyInterpreterState.next
	interpThreadsHead       uint64 // PyInterpreterState.threads.head

	tstateNext           uint64 // PyThreadState.next
	tstateCurrentFrame   uint64 // .current_frame (3.13+), or .cframe (3.11, 3.12)
	tstateThreadID       uint64 // .thread_id (pthread_t)
	tstateNativeThreadID uint64 // .native_thread_id (the LWP)
	// cframeCurrentFrame is _PyCFrame.current_frame; hasCFrame says the
	// thread state points at a _PyCFrame first (3.11, 3.12).
	cframeCurrentFrame uint64
	hasCFrame          bool

	framePrevious uint64 // _PyInterpreterFrame.previous
	frameCode     uint64 // .f_code (3.11, 3.12) or .f_executable (3.13+)
	frameInstr    uint64 // .prev_instr (3.11, 3.12) or .instr_ptr (3.13+)
	frameOwner    uint64 // .owner (a char)
	// frameIsEntry is the offset of 3.11's is_entry flag; 0 where the
	// version marks eval-loop entries with a shim frame instead.
	frameIsEntry uint64
	// shimOwner is the first owner value that marks a frame the eval loop
	// pushed for itself (FRAME_OWNED_BY_CSTACK in 3.12/3.13,
	// FRAME_OWNED_BY_INTERPRETER in 3.14); 0 for 3.11, which has none.
	shimOwner uint8
	// taggedExecutable says f_executable is a _PyStackRef whose low bits
	// are tags (3.14).
	taggedExecutable bool

	codeFilename     uint64 // PyCodeObject.co_filename
	codeName         uint64 // .co_name
	codeQualname     uint64 // .co_qualname (0: not published, use co_name)
	codeLinetable    uint64 // .co_linetable
	codeFirstLineno  uint64 // .co_firstlineno
	codeCodeAdaptive uint64 // .co_code_adaptive: the instructions

	bytesSize uint64 // PyBytesObject.ob_base.ob_size
	bytesData uint64 // .ob_sval

	unicodeState       uint64 // PyASCIIObject.state (the bit field)
	unicodeLength      uint64 // PyASCIIObject.length
	asciiObjectSize    uint64 // sizeof(PyASCIIObject): compact ASCII data follows
	compactUnicodeSize uint64 // sizeof(PyCompactUnicodeObject): other compact data follows
}

// versionString formats PY_VERSION_HEX as "3.11.2".
func versionString(hex uint64) string {
	return fmt.Sprintf("%d.%d.%d", hex>>24&0xff, hex>>16&0xff, hex>>8&0xff)
}

// minor returns the major<<8|minor part of PY_VERSION_HEX, e.g. 0x030b.
func minor(hex uint64) uint64 { return hex >> 16 & 0xffff }

// layout311 is CPython 3.11 on x86-64. 3.11 publishes no offsets for
// out-of-process readers; these are offsetof() of the 3.11 headers
// (Include/internal/pycore_frame.h, pycore_interp.h, pycore_runtime.h,
// cpython/pystate.h, cpython/code.h, cpython/unicodeobject.h), the same for
// every 3.11.x release build. testdata/python/src/offsets311.c prints them
// from the installed headers and layout_test.go compares.
func layout311(version uint64) *layout {
	return &layout{
		version:                 version,
		runtimeInterpretersHead: 40,
		interpNext:              0,
		interpThreadsHead:       16,
		tstateNext:              8,
		tstateCurrentFrame:      56, // cframe
		tstateThreadID:          152,
		tstateNativeThreadID:    160,
		cframeCurrentFrame:      8,
		hasCFrame:               true,
		framePrevious:           48,
		frameCode:               32,
		frameInstr:              56,
		frameOwner:              69,
		frameIsEntry:            68,
		codeFilename:            112,
		codeName:                120,
		codeQualname:            128,
		codeLinetable:           136,
		codeFirstLineno:         72,
		codeCodeAdaptive:        184,
		bytesSize:               16,
		bytesData:               32,
		unicodeState:            32,
		unicodeLength:           16,
		asciiObjectSize:         48,
		compactUnicodeSize:      72,
	}
}

// layout312 is CPython 3.12 on x86-64, which, like 3.11, publishes no
// offsets: offsetof() of the 3.12 headers (the same files as 3.11's).
// Against 3.11, PyThreadState lost its recursion fields before thread_id,
// _PyInterpreterFrame starts with f_code and marks eval-loop entries with
// a shim frame (FRAME_OWNED_BY_CSTACK) instead of is_entry, PyCodeObject
// grew _co_instrumentation fields, and PyASCIIObject lost its wstr pointer.
// testdata/python/src/offsets311.c prints them from installed 3.12 headers
// too and layout_test.go compares; the crash_ctypes.pyenv3121 core checks
// them against faulthandler.
func layout312(version uint64) *layout {
	return &layout{
		version:                 version,
		runtimeInterpretersHead: 40,
		interpNext:              0,
		interpThreadsHead:       72,
		tstateNext:              8,
		tstateCurrentFrame:      56, // cframe
		tstateThreadID:          136,
		tstateNativeThreadID:    144,
		cframeCurrentFrame:      0,
		hasCFrame:               true,
		framePrevious:           8,
		frameCode:               0,
		frameInstr:              56,
		frameOwner:              70,
		shimOwner:               3, // FRAME_OWNED_BY_CSTACK
		codeFilename:            112,
		codeName:                120,
		codeQualname:            128,
		codeLinetable:           136,
		codeFirstLineno:         68,
		codeCodeAdaptive:        192,
		bytesSize:               16,
		bytesData:               32,
		unicodeState:            32,
		unicodeLength:           16,
		asciiObjectSize:         40,
		compactUnicodeSize:      56,
	}
}

// debugCookie opens _Py_DebugOffsets, the first member of _PyRuntime in
// CPython 3.13 and later (Include/internal/pycore_runtime.h, 3.14's
// pycore_debug_offsets.h): offsets published for out-of-process debuggers.
// 3.12 has none (its _PyRuntimeState starts with _initialized).
const debugCookie = "xdebugpy"

// debugOffsetsSize is how much of _Py_DebugOffsets parseDebugOffsets reads
// at most (3.14's struct up to its unicode_object member is smaller).
const debugOffsetsSize = 1024

// offsetFields reads _Py_DebugOffsets as a sequence of uint64 fields.
type offsetFields struct {
	b   []byte
	off int
	err error
}

func (f *offsetFields) next() uint64 {
	if f.off+8 > len(f.b) {
		f.err = fmt.Errorf("_Py_DebugOffsets is shorter than %d bytes", f.off+8)
		return 0
	}
	v := binary.LittleEndian.Uint64(f.b[f.off:])
	f.off += 8
	return v
}

// skip skips n fields.
func (f *offsetFields) skip(n int) { f.off += 8 * n }

// parseDebugOffsets reads the layout from the _Py_DebugOffsets at the start
// of _PyRuntime (b holds it, cookie first). Each minor version has its own
// struct: the field order below follows CPython's declarations.
func parseDebugOffsets(b []byte) (*layout, error) {
	if len(b) < 16 || string(b[:8]) != debugCookie {
		return nil, fmt.Errorf("no %q cookie at _PyRuntime", debugCookie)
	}
	version := binary.LittleEndian.Uint64(b[8:])
	l := &layout{version: version}
	f := &offsetFields{b: b, off: 16}
	switch minor(version) {
	case 0x030d, 0x030e: // 3.13, 3.14: uint64_t fields, each struct led by its size
		v314 := minor(version) == 0x030e
		f.skip(1) // free_threaded
		f.skip(2) // runtime_state.size, finalizing
		l.runtimeInterpretersHead = f.next()
		f.skip(2) // interpreter_state.size, id
		l.interpNext = f.next()
		l.interpThreadsHead = f.next()
		if v314 {
			f.skip(1) // threads_main
		}
		f.skip(9) // gc ... gil_runtime_state_holder
		if v314 {
			f.skip(2) // code_object_generation, tlbc_generation
		}
		f.skip(2) // thread_state.size, prev
		l.tstateNext = f.next()
		f.skip(1) // interp
		l.tstateCurrentFrame = f.next()
		l.tstateThreadID = f.next()
		l.tstateNativeThreadID = f.next()
		f.skip(2) // datastack_chunk, status
		f.skip(1) // interpreter_frame.size
		l.framePrevious = f.next()
		l.frameCode = f.next() // f_executable
		l.frameInstr = f.next()
		f.skip(1) // localsplus
		l.frameOwner = f.next()
		if v314 {
			f.skip(2) // stackpointer, tlbc_index
		}
		f.skip(1) // code_object.size
		l.codeFilename = f.next()
		l.codeName = f.next()
		l.codeQualname = f.next()
		l.codeLinetable = f.next()
		l.codeFirstLineno = f.next()
		f.skip(3)
		l.codeCodeAdaptive = f.next()
		if v314 {
			f.skip(1) // co_tlbc
		}
		f.skip(2) // pyobject
		f.skip(4) // type_object
		f.skip(3) // tuple_object
		f.skip(3) // list_object
		if v314 {
			f.skip(4) // set_object
		}
		f.skip(3) // dict_object
		f.skip(2) // float_object
		f.skip(3) // long_object
		f.skip(1) // bytes_object.size
		l.bytesSize = f.next()
		l.bytesData = f.next()
		f.skip(1) // unicode_object.size
		l.unicodeState = f.next()
		l.unicodeLength = f.next()
		l.asciiObjectSize = f.next()
		// PyCompactUnicodeObject adds utf8_length and utf8 to PyASCIIObject.
		l.compactUnicodeSize = l.asciiObjectSize + 16
		l.shimOwner = 3 // CSTACK (3.13); 3.14's INTERPRETER=3 and CSTACK=4
		l.taggedExecutable = v314
	default:
		//lint:ignore ST1005 a proper noun
		return nil, fmt.Errorf("Python %s: its _Py_DebugOffsets layout is not known to this faultline", versionString(version))
	}
	if f.err != nil {
		return nil, f.err
	}
	return l, nil
}
