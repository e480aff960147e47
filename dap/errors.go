package dap

// Error ids of error responses (ErrorMessage.id): stable numbers a client
// may match on.
const (
	errUnsupported  = 1001 // a request this adapter does not implement
	errBadArguments = 1002 // arguments missing or of the wrong type
	errInternal     = 1003 // a handler failed unexpectedly
	errNotRunning   = 1004 // execution control on a dump
	errNoDump       = 1005 // a request that needs a launched dump before launch
	errLaunch       = 1006 // the dump could not be opened
	errNotFound     = 1007 // no such thread, frame, variable or source
)

// notRunning is the answer to every request that would run the process.
const notRunning = "post-mortem: the process is not running (this is a core dump)"
