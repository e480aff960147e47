package native

import "github.com/faultline-dev/faultline/analysis/model"

// Locate symbolizes a code address of the crashed process: the inline
// chain at addr, innermost first (an instruction address, not a return
// address); nil for an address no module covers.
func (p *Process) Locate(addr uint64) []model.Frame {
	if p.moduleAt(addr) == nil {
		return nil
	}
	return newSymbolizer(p).lookup(addr, false)
}
