// Package dap is faultline's post-mortem debug adapter: a Debug Adapter
// Protocol server (DAP, microsoft.github.io/debug-adapter-protocol) over
// stdio that shows a core dump the way debuggers show a stopped process.
// `faultline dap` runs it; VS Code (debug type "faultline") and nvim-dap
// start it.
//
// A launch request {"coreFile", "program"?, "sysroot"?, "sourceMap"?}
// (the names cpptools and CodeLLDB use) opens the dump with the analysis
// engine and the adapter stops at once with reason "exception" on the
// crashing thread. Threads, stack traces (every inline level a frame),
// scopes and variables (arguments, locals, registers from the frame-values
// engine), evaluate, readMemory, disassemble and source all read the same
// crash model and process memory; requests that would run the process
// answer "post-mortem: the process is not running".
//
// This is the only package that imports github.com/google/go-dap (the
// protocol's types and framing); analysis knows nothing of DAP.
package dap
