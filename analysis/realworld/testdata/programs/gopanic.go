// gopanic MODE: a Go program run with GOTRACEBACK=crash, whose runtime
// writes a core on a fatal panic.
//
//	nil    a nil pointer dereference two calls deep (the runtime turns the
//	       SIGSEGV into a panic through runtime.sigpanic, then aborts)
//	spin   prints "ready" and spins until a signal ends it
package main

import (
	"fmt"
	"os"
)

type record struct {
	name  string
	score int
}

//go:noinline
func scoreOf(r *record) int { return r.score * 2 }

//go:noinline
func total(rs []*record) int {
	s := 0
	for _, r := range rs {
		s += scoreOf(r)
	}
	return s
}

func main() {
	rs := []*record{{"a", 1}, nil}
	if len(os.Args) > 1 && os.Args[1] == "spin" {
		fmt.Println("ready")
		for {
		}
	}
	fmt.Println(total(rs))
}
