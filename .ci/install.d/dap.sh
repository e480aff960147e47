# Sourced by .ci/test after .ci/lib.sh: what the debug adapter's tests need.
# TestDebugClient (dap/conformance_test.go) drives `faultline dap` with
# Microsoft's DAP test client, pinned by dap/conformance/package-lock.json,
# and checks it against gdb; the source-lookup cases compile a program
# with gcc.
command -v npm >/dev/null || apt_install nodejs npm
apt_install gdb gcc
npm ci --prefix dap/conformance --no-audit --no-fund --loglevel=error
