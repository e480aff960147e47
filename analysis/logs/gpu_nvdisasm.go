package logs

import (
	"errors"
	"io"
	"strconv"
	"strings"
)

// NvdisasmListing is the text `nvdisasm -c -g` or `nvdisasm -c -gi` prints
// for a cubin: code sections, their instructions, and the source line
// annotations ("//## File ..., line N inlined at ..., line M") that -gi
// adds from the cubin's line table.
type NvdisasmListing struct {
	Sections []NvdisasmSection
}

// NvdisasmSection is one "//------ .text.KERNEL ------" block.
type NvdisasmSection struct {
	Name         string // ".text.KERNEL"
	Instructions []NvdisasmInstruction
}

// NvdisasmInstruction is one "/*0040*/  OPCODE ... ;" line.
type NvdisasmInstruction struct {
	// Address is the number in /*...*/: an offset within the section for
	// non-relocated cubins, a device address for relocated ones.
	Address uint64
	Text    string
	// Function is the last function label before the instruction.
	Function string
	// Chain is the source chain in effect, innermost first: the last
	// annotation block at or before this instruction in the section.
	Chain []SourceLevel
	// Annotated says nvdisasm printed that block right before this
	// instruction. nvdisasm prints a block only when the innermost line
	// changes, so the outer levels of Chain are exact only here.
	Annotated bool
	// LogLine is the instruction's line number in the listing.
	LogLine int
}

// SourceLevel is one level of an annotation block.
type SourceLevel struct {
	File string
	Line int
}

// Caps on what one listing may make us keep.
const (
	maxNvdisasmInstructions = 1 << 22
	maxNvdisasmChain        = 1024
)

// ParseNvdisasm reads nvdisasm output. Lines it does not recognize are
// skipped; it fails only when r fails or nothing in r looks like nvdisasm.
func ParseNvdisasm(r io.Reader) (*NvdisasmListing, error) {
	lr := newLineReader(r, maxLineLen)
	l := &NvdisasmListing{}
	var sec *NvdisasmSection
	var chain, block []SourceLevel
	inBlock := false
	fn := ""
	total := 0
	for {
		line, ok, err := lr.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		s := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(s, "//----") && strings.Contains(s, " .text"):
			name := strings.Trim(strings.TrimSpace(strings.Trim(s, "/-")), "-")
			l.Sections = append(l.Sections, NvdisasmSection{Name: strings.TrimSpace(name)})
			sec = &l.Sections[len(l.Sections)-1]
			chain, block, inBlock, fn = nil, nil, false, ""
		case strings.HasPrefix(s, "//## File "):
			if !inBlock {
				block, inBlock = nil, true
			}
			if lv, ok := parseNvdisasmLevel(s[len("//## "):]); ok && len(block) < maxNvdisasmChain {
				block = append(block, lv)
			}
		case strings.HasPrefix(s, "/*") && sec != nil:
			end := strings.Index(s[2:], "*/")
			if end < 0 {
				continue
			}
			addr, err := strconv.ParseUint(s[2:2+end], 16, 64)
			if err != nil {
				continue
			}
			in := NvdisasmInstruction{Address: addr, Text: strings.TrimSpace(s[2+end+2:]), Function: fn, LogLine: lr.num}
			if inBlock {
				chain, inBlock, in.Annotated = block, false, true
			}
			in.Chain = chain
			if total++; total > maxNvdisasmInstructions {
				return l, nil
			}
			sec.Instructions = append(sec.Instructions, in)
		case strings.HasSuffix(s, ":") && !strings.HasPrefix(s, ".L") && !strings.HasPrefix(s, ".text") &&
			sec != nil && !strings.ContainsAny(s, " \t"):
			fn = strings.TrimSuffix(s, ":")
		}
	}
	if len(l.Sections) == 0 {
		return nil, errors.New("no nvdisasm code sections (\"//---- .text.NAME ----\") found")
	}
	return l, nil
}

// parseNvdisasmLevel reads `File "PATH", line N` and ignores what follows
// (` inlined at "PATH", line M`: the next line of the block repeats it).
func parseNvdisasmLevel(s string) (SourceLevel, bool) {
	rest, ok := strings.CutPrefix(s, "File \"")
	if !ok {
		return SourceLevel{}, false
	}
	q := strings.Index(rest, "\", line ")
	if q < 0 {
		return SourceLevel{}, false
	}
	file := rest[:q]
	num := rest[q+len("\", line "):]
	n := 0
	for n < len(num) && num[n] >= '0' && num[n] <= '9' {
		n++
	}
	v, err := strconv.Atoi(num[:n])
	if err != nil {
		return SourceLevel{}, false
	}
	return SourceLevel{File: file, Line: v}, true
}
