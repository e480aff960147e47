package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// markdownImage matches a Markdown image, ![alt](path).
var markdownImage = regexp.MustCompile(`!\[[^\]]*\]\(([^)\s]+)\)`)

// TestREADMEImagesExist checks that every image README.md shows is a PNG
// file of the checkout (the screenshots come from
// `editors/test.sh --update-screenshots`), the debugger's Call Stack and
// Variables screenshots among them.
func TestREADMEImagesExist(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, m := range markdownImage.FindAllSubmatch(readme, -1) {
		rel := string(m[1])
		linked[filepath.Clean(rel)] = true
		b, err := os.ReadFile(filepath.Join(repoRoot, rel))
		if err != nil {
			t.Errorf("README.md shows %s: %v", rel, err)
			continue
		}
		if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("README.md shows %s, which is not a PNG file", rel)
		}
	}
	for _, want := range []string{"vscode-callstack.png", "vscode-variables.png"} {
		if !linked[filepath.Join("editors", "screenshots", want)] {
			t.Errorf("README.md does not show the debugger's %s", want)
		}
	}
	t.Logf("README.md shows %d images, each a PNG of the checkout", len(linked))
}

// TestExtensionREADMEImagesExist: the VS Code extension's README shows
// what a user can do with screenshots of the editor test run (the crash
// editor, the culprit, the Crash view, a debug session), each a PNG of the
// checkout (editors/test.sh --update-screenshots writes them).
func TestExtensionREADMEImagesExist(t *testing.T) {
	dir := filepath.Join(repoRoot, "editors", "vscode")
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]bool{}
	for _, m := range markdownImage.FindAllSubmatch(readme, -1) {
		rel := string(m[1])
		shown[filepath.Base(rel)] = true
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("the extension README shows %s: not a PNG of the checkout (%v)", rel, err)
		}
	}
	for _, want := range []string{"vscode-crash-editor.png", "vscode-apport-report.png", "vscode-culprit.png", "vscode-crash-view.png", "vscode-callstack.png"} {
		if !shown[want] {
			t.Errorf("the extension README does not show %s", want)
		}
	}
}
