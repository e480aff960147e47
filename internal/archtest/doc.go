// Package archtest holds the tests that enforce ARCHITECTURE.md's package
// rules (imports_test.go) and its limit on function length (funclen_test.go);
// it has no code of its own.
package archtest
