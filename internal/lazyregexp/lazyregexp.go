// Package lazyregexp is a regexp.Regexp compiled on first use, so that
// the package-level patterns of the log readers, the classifier and the
// component registry cost nothing when a process never uses them: every
// command of the faultline binary starts with every package's variables
// initialized, and compiling about a hundred patterns took most of the
// start-up of `faultline analyze` on a core (as cmd/go's
// internal/lazyregexp does for the go command).
package lazyregexp

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled when first used. The expression
// must compile (as with regexp.MustCompile, a bad one panics, on first use).
type Regexp struct {
	re func() *regexp.Regexp
}

// New returns the pattern expr, compiled on first use.
func New(expr string) *Regexp {
	return &Regexp{re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })}
}

// The methods of regexp.Regexp the callers use.

func (r *Regexp) MatchString(s string) bool              { return r.re().MatchString(s) }
func (r *Regexp) FindString(s string) string             { return r.re().FindString(s) }
func (r *Regexp) FindStringIndex(s string) []int         { return r.re().FindStringIndex(s) }
func (r *Regexp) FindStringSubmatch(s string) []string   { return r.re().FindStringSubmatch(s) }
func (r *Regexp) FindAllString(s string, n int) []string { return r.re().FindAllString(s, n) }
func (r *Regexp) FindAllStringIndex(s string, n int) [][]int {
	return r.re().FindAllStringIndex(s, n)
}
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.re().FindAllStringSubmatch(s, n)
}
func (r *Regexp) FindSubmatch(b []byte) [][]byte { return r.re().FindSubmatch(b) }
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.re().ReplaceAllString(src, repl)
}
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.re().ReplaceAllStringFunc(src, repl)
}
