// Package e2e holds faultline's end-to-end tests: they build the faultline
// binary once per test run and run it as a subprocess, the way users do,
// checking exit codes, standard output and error, and the files written.
// Every command of main.go and every command line of README.md's examples
// is run by one of them (readme_test.go checks the README side).
package e2e
