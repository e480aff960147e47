package gitsrc

import (
	"os"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/gitsrc/gitsrctest"
)

// TestUpstreamFilesListed: .ci/install.d/upstreams.sh fetches every
// Debian file the built upstream histories read, with the same SHA-256.
func TestUpstreamFilesListed(t *testing.T) {
	script, err := os.ReadFile("../.ci/install.d/upstreams.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range gitsrctest.DebianFiles {
		if !strings.Contains(string(script), " "+f.Name+" "+f.SHA256+"\"") {
			t.Errorf("upstreams.sh does not fetch %s (%s)", f.Name, f.SHA256)
		}
	}
}
