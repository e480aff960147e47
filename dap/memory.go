package dap

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	godap "github.com/google/go-dap"
)

// maxReadMemory caps one readMemory answer (the Memory view asks in pages
// of a few KiB; the cap keeps a bad count from allocating gigabytes).
const maxReadMemory = 1 << 20

// maxDisassemble caps the instructions of one disassemble answer.
const maxDisassemble = 4096

// parseAddress reads a memoryReference ("0x7ffc...", as this adapter
// hands them out in frames and variables) plus offset.
func parseAddress(ref string, offset int) (uint64, error) {
	s := strings.TrimSpace(ref)
	n, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X"), 16, 64)
	if err != nil || !strings.HasPrefix(strings.ToLower(s), "0x") {
		return 0, fmt.Errorf("memory reference %q is not an address (0x...)", ref)
	}
	return n + uint64(int64(offset)), nil
}

func (s *Server) onReadMemory(r *godap.ReadMemoryRequest) {
	a := r.Arguments
	addr, err := parseAddress(a.MemoryReference, a.Offset)
	if err != nil {
		s.errorResponse(&r.Request, errBadArguments, "%v", err)
		return
	}
	count := min(max(a.Count, 0), maxReadMemory)
	buf := make([]byte, count)
	// Read what is readable from the start; the rest is unreadable
	// (DAP: unreadableBytes counts from the end of data).
	n := s.readPrefix(addr, buf)
	body := godap.ReadMemoryResponseBody{Address: fmt.Sprintf("%#x", addr), UnreadableBytes: count - n}
	if n > 0 {
		body.Data = base64.StdEncoding.EncodeToString(buf[:n])
	}
	s.send(&godap.ReadMemoryResponse{Response: response(&r.Request), Body: body})
}

// readPrefix reads as much of buf from addr as the dump holds contiguously.
func (s *Server) readPrefix(addr uint64, buf []byte) int {
	n, err := s.model.sess.ReadMemory(addr, buf)
	if err == nil {
		return n
	}
	// A read across the end of a mapping fails whole: retry by halves.
	lo, hi := 0, len(buf)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if k, err := s.model.sess.ReadMemory(addr, buf[:mid]); err == nil && k == mid {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// onDisassemble decodes instructions around a reference: instructionOffset
// may be negative (VS Code asks for instructions before the pc). Where the
// dump has no code (or decoding must start at the function's first
// byte), the answer is padded with "??" rows so its length is what was
// asked, as the protocol requires.
func (s *Server) onDisassemble(r *godap.DisassembleRequest) {
	a := r.Arguments
	pc, err := parseAddress(a.MemoryReference, a.Offset)
	if err != nil {
		s.errorResponse(&r.Request, errBadArguments, "%v", err)
		return
	}
	count := min(max(a.InstructionCount, 0), maxDisassemble)
	before := max(-a.InstructionOffset, 0)
	after := max(count+a.InstructionOffset-1, 0)
	ins := s.model.sess.Disassemble(pc, before, after)
	at := -1
	for i, in := range ins {
		if in.PC == pc {
			at = i
		}
	}
	out := make([]godap.DisassembledInstruction, 0, count)
	// Rows before what could be decoded.
	first := pc
	if at >= 0 {
		first = ins[0].PC
	}
	for k := before - max(at, 0); k > 0 && len(out) < count; k-- {
		out = append(out, godap.DisassembledInstruction{Address: fmt.Sprintf("%#x", first-uint64(k)), Instruction: "??"})
	}
	skip := max(at-before, 0) + max(a.InstructionOffset, 0)
	for i := skip; i < len(ins) && len(out) < count; i++ {
		out = append(out, s.model.instruction(ins[i].PC, ins[i].Bytes, ins[i].Text))
	}
	next := pc
	if len(ins) > 0 {
		last := ins[len(ins)-1]
		next = last.PC + uint64(len(last.Bytes))
	}
	for len(out) < count {
		out = append(out, godap.DisassembledInstruction{Address: fmt.Sprintf("%#x", next), Instruction: "??"})
		next++
	}
	resp := &godap.DisassembleResponse{Response: response(&r.Request)}
	resp.Body.Instructions = out
	s.send(resp)
}

// instruction is one decoded instruction with its symbol and source line.
func (v *crashView) instruction(pc uint64, code []byte, text string) godap.DisassembledInstruction {
	d := godap.DisassembledInstruction{Address: fmt.Sprintf("%#x", pc), Instruction: text,
		InstructionBytes: hexBytes(code)}
	locs := v.sess.Locate(pc)
	if len(locs) == 0 {
		return d
	}
	outer := locs[len(locs)-1]
	if outer.Function != "" {
		d.Symbol = fmt.Sprintf("%s+%d", outer.Function, outer.Offset)
	}
	inner := locs[0]
	if p := v.localPath(&inner); p != "" && inner.Line > 0 {
		d.Location = &godap.Source{Name: baseName(p), Path: p}
		d.Line = inner.Line
	}
	return d
}

func hexBytes(b []byte) string {
	parts := make([]string, len(b))
	for i, c := range b {
		parts[i] = fmt.Sprintf("%02x", c)
	}
	return strings.Join(parts, " ")
}
