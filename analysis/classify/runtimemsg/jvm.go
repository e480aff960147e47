package runtimemsg

// JVMHandlerNote says, when the handler that re-raised the fatal signal is
// the JVM's, where the JVM wrote what it knows of the crash: its
// fatal-error log names the Java method of each JIT-compiled frame, which
// the core cannot (JIT code belongs to no file).
func (a *Reader) JVMHandlerNote() {
	if !a.cls.Reraised {
		return
	}
	for _, f := range a.frames[:a.start] {
		if BaseName(f.Function) == "JVM_handle_linux_signal" {
			a.evidence("the handler is the JVM's (JVM_handle_linux_signal → VMError::report_and_die): it wrote its fatal-error log "+
				"hs_err_pid%d.log (in the JVM's working directory unless -XX:ErrorFile names another), which names the Java "+
				"method of each JIT-compiled `??` frame, then aborted", a.c.Dump.PID)
			return
		}
	}
}
