package cuda

import "fmt"

// Leaf sections of cudacoredump.h: the state of one lane, warp, CTA or
// grid, hung below its table row by sh_link (the table) and sh_info (the row).
const (
	shtLocalMem  = shtLoUser + 3
	shtSharedMem = shtLoUser + 4
	shtDevRegs   = shtLoUser + 5
	shtBT        = shtLoUser + 8
	shtDevPred   = shtLoUser + 17
	shtParamMem  = shtLoUser + 18
	shtDevURegs  = shtLoUser + 19
	shtDevUPred  = shtLoUser + 20
)

// parentType is the table each linked section must hang below: device →
// context, grid, SM; SM → CTA → warp → lane; the leaves below their rows.
var parentType = map[uint32]uint32{
	shtCtxTable: shtDevTable, shtGridTbl: shtDevTable, shtSMTable: shtDevTable,
	shtModTable: shtCtxTable, shtCTATable: shtSMTable, shtWPTable: shtCTATable, shtLNTable: shtWPTable,
	shtLocalMem: shtLNTable, shtDevRegs: shtLNTable, shtBT: shtLNTable, shtDevPred: shtLNTable,
	shtSharedMem: shtCTATable, shtDevURegs: shtWPTable, shtDevUPred: shtWPTable, shtParamMem: shtGridTbl,
}

// containerTables are the tables other sections hang below: their rows
// must be addressable, so sh_entsize may not be 0.
var containerTables = map[uint32]bool{shtDevTable: true, shtCtxTable: true, shtGridTbl: true, shtSMTable: true,
	shtCTATable: true, shtWPTable: true, shtLNTable: true}

var tableNames = map[uint32]string{shtDevTable: "device table", shtCtxTable: "context table", shtGridTbl: "grid table",
	shtSMTable: "SM table", shtCTATable: "CTA table", shtWPTable: "warp table", shtLNTable: "lane table",
	shtModTable: "module table"}

func typeName(t uint32) string {
	if n, ok := tableNames[t]; ok {
		return n
	}
	return fmt.Sprintf("section type %#x", t)
}

// HierarchyError is a structural defect of a GPU core dump's table tree,
// for which the dump is refused as a whole (as LLDB's nvgpu-core reader
// and cuda-gdb refuse it): a table or leaf whose sh_link names no table,
// a table of the wrong kind or a row it does not have, a container table
// without a row size, a device table with no SMs below it.
type HierarchyError struct {
	Section string
	Msg     string
}

func (e *HierarchyError) Error() string {
	if e.Section == "" {
		return "GPU core dump: " + e.Msg
	}
	return fmt.Sprintf("GPU core dump: section %s: %s", e.Section, e.Msg)
}

// checkHierarchy validates the table tree before anything is read from it.
// A leaf whose data lies past the end of the file is not a structural
// defect: it is skipped (with a problem) when read, as LLDB skips it.
func (p *dumpParser) checkHierarchy() error {
	secs := p.f.sections
	byIndex := make(map[int]*elfSection, len(secs))
	for i := range secs {
		byIndex[secs[i].index] = &secs[i]
	}
	hasSM := false
	for i := range secs {
		s := &secs[i]
		if containerTables[s.Type] && s.Entsize == 0 && s.Size > 0 {
			return &HierarchyError{s.Name, "zero sh_entsize: the " + typeName(s.Type) + " has no addressable rows"}
		}
		want, linked := parentType[s.Type]
		if !linked {
			continue
		}
		parent := byIndex[int(s.Link)]
		if s.Link == 0 || parent == nil {
			return &HierarchyError{s.Name, fmt.Sprintf("invalid sh_link %d: no parent %s", s.Link, typeName(want))}
		}
		if parent.Type != want {
			return &HierarchyError{s.Name, fmt.Sprintf("sh_link %d resolves to a parent of %s, expected type %s",
				s.Link, typeName(parent.Type), typeName(want))}
		}
		if parent.Entsize > 0 {
			if rows := parent.Size / parent.Entsize; uint64(s.Info) >= rows {
				return &HierarchyError{s.Name, fmt.Sprintf("sh_info row %d out of range for table %s (%d rows)", s.Info, parent.Name, rows)}
			}
		}
		if s.Type == shtSMTable && s.Size > 0 {
			hasSM = true
		}
	}
	if !hasSM {
		return &HierarchyError{"", "no NVGPU device hierarchy found (no SM table below the device table)"}
	}
	return nil
}
