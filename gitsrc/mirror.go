package gitsrc

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
)

// Sites without access to github.com keep mirrors, and git users say so in
// their git configuration: `url.<base>.insteadOf = <prefix>` rewrites
// every URL that starts with prefix to start with base instead (the
// longest prefix wins; git-config(1)). gitsrc reads the same files git
// reads and rewrites every URL it fetches from or lists — a rule's, the
// registry's, a package note's — so that faultline reaches whatever plain
// `git ls-remote` reaches. The cache stays keyed by the URL before
// rewriting. pushInsteadOf concerns pushes only, which gitsrc never does.

// maxGitConfigSize caps one git configuration file read.
const maxGitConfigSize = 1 << 20

// urlRewrite is one url.<base>.insteadOf rule.
type urlRewrite struct {
	base, prefix string
}

// gitConfigFiles are the files git reads its configuration from, in its
// order: the system file ($GIT_CONFIG_SYSTEM, else /etc/gitconfig; none
// with $GIT_CONFIG_NOSYSTEM), then the global ones: $GIT_CONFIG_GLOBAL
// alone when set, else $XDG_CONFIG_HOME/git/config (~/.config/git/config)
// and ~/.gitconfig.
func gitConfigFiles() []string {
	var files []string
	if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		if p := os.Getenv("GIT_CONFIG_SYSTEM"); p != "" {
			files = append(files, p)
		} else {
			files = append(files, "/etc/gitconfig")
		}
	}
	if p, ok := os.LookupEnv("GIT_CONFIG_GLOBAL"); ok {
		if p != "" {
			files = append(files, p)
		}
		return files
	}
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	if xdg != "" {
		files = append(files, filepath.Join(xdg, "git", "config"))
	}
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	return files
}

// loadRewrites reads the insteadOf rules of the given git configuration
// files; a file that is missing or unreadable adds none.
func loadRewrites(files []string) []urlRewrite {
	var out []urlRewrite
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		cfg := gitconfig.New()
		err = gitconfig.NewDecoder(io.LimitReader(f, maxGitConfigSize)).Decode(cfg)
		f.Close()
		if err != nil {
			continue
		}
		for _, sec := range cfg.Sections {
			if !sec.IsName("url") {
				continue
			}
			for _, sub := range sec.Subsections {
				for _, prefix := range sub.OptionAll("insteadOf") {
					if prefix != "" {
						out = append(out, urlRewrite{base: sub.Name, prefix: prefix})
					}
				}
			}
		}
	}
	return out
}

// rewriteURL applies the user's insteadOf rules to url: the rule with the
// longest matching prefix (the later one on a tie, as git's last value
// wins) replaces that prefix by its base. The files are read each time (a
// few small files, a few times a run): a long-running server sees edits.
func rewriteURL(url string) string {
	return applyRewrites(loadRewrites(gitConfigFiles()), url)
}

func applyRewrites(rules []urlRewrite, url string) string {
	best := -1
	for i, r := range rules {
		if strings.HasPrefix(url, r.prefix) && (best < 0 || len(r.prefix) >= len(rules[best].prefix)) {
			best = i
		}
	}
	if best < 0 {
		return url
	}
	return rules[best].base + url[len(rules[best].prefix):]
}

// viaMirror names the URL actually dialled when a rule rewrote it, for
// messages: "" when url is dialled as it is.
func viaMirror(url string) string {
	if u := rewriteURL(url); u != url {
		return " (via " + u + ", from your git configuration's url.insteadOf)"
	}
	return ""
}
