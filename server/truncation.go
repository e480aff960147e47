package server

import (
	"fmt"
	"strings"

	"github.com/faultline-dev/faultline/analysis"
)

// truncationMarkers are the words of the problems analysis records for a
// dump that is cut short: an ELF core shorter than its program headers
// say, or compressed data that breaks off.
var truncationMarkers = []string{"the core is truncated", "read as a truncated dump"}

// truncationMessage is the Warning shown when c's dump is cut short
// (window/showMessage: frames and values past the cut are missing, and the
// user must know before trusting them), or "" when it is whole. The same
// problem is listed in the report's problems.
func truncationMessage(c *analysis.Crash) string {
	for _, p := range c.Problems {
		for _, m := range truncationMarkers {
			if strings.Contains(p.Message, m) {
				return fmt.Sprintf("faultline: %s is incomplete, so frames and values may be missing: %s",
					c.Dump.Path, p.Message)
			}
		}
	}
	return ""
}
