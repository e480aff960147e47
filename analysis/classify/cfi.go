package classify

import (
	"fmt"

	"github.com/faultline-dev/faultline/analysis/model"
)

// cfiFromHandler classifies a control-flow-integrity failure that
// UBSan's runtime reported (-fno-sanitize-trap=cfi): the handler
// __ubsan_handle_cfi_check_fail on the stack.
func (a *analyzer) cfiFromHandler(f model.Frame) {
	a.cls.Kind = model.KindCFIViolation
	a.evidence("the stack goes through %s: a control-flow-integrity check (-fsanitize=cfi) failed and its runtime aborted", baseName(f.Function))
	a.cls.Summary = fmt.Sprintf("Control-flow integrity check failed in %s: an indirect call or cast through a pointer whose target's type is not the one the code expects; the runtime's report on stderr names both types.", a.where())
}
