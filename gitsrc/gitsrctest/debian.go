package gitsrctest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Real upstream histories cannot be checked in or fetched from GitHub by
// the tests, but Debian's source releases can be fetched from
// deb.debian.org: upstream release tarballs (.orig) and Debian's patch
// sets, whose upstream fixes carry the upstream commit they come from.
// DebianFile fetches one such file into the test cache, keyed by the
// SHA-256 the suite's Sources index gives for it, and checks it.

// DebianFile is a file of a Debian source package and its SHA-256, as
// dists/SUITE/main/source/Sources lists them.
type DebianFile struct {
	Package string // source package, e.g. "zlib"
	Name    string // e.g. "zlib_1.2.11.dfsg.orig.tar.gz"
	SHA256  string
}

// debianPools are where a source file may be, tried in order (the list
// .ci/install.d/upstreams.sh tries): a security upload (+debNNuN) is in the
// security archive too, and once a newer upload or the suite's archiving
// drops it from deb.debian.org's pool, archive.debian.org keeps it. The
// SHA-256 decides.
var debianPools = []string{
	"http://deb.debian.org/debian/pool/main/",
	"http://deb.debian.org/debian-security/pool/updates/main/",
	"http://archive.debian.org/debian/pool/main/",
	"http://archive.debian.org/debian-security/pool/updates/main/",
}

// poolURLs are the file's URLs in Debian's archives.
func (f DebianFile) poolURLs() []string {
	prefix := f.Package[:1]
	if strings.HasPrefix(f.Package, "lib") {
		prefix = f.Package[:4]
	}
	urls := make([]string, len(debianPools))
	for i, pool := range debianPools {
		urls[i] = pool + prefix + "/" + f.Package + "/" + f.Name
	}
	return urls
}

// CacheRoot is $FAULTLINE_TEST_CACHE (default ~/.cache/faultline-test).
func CacheRoot() (string, error) {
	if root := os.Getenv("FAULTLINE_TEST_CACHE"); root != "" {
		return root, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "faultline-test"), nil
}

// Fetch returns the path of the file in the test cache
// (debian-sources/SHA256-NAME, what .ci/install.d/upstreams.sh fetches),
// downloading it when it is missing: three tries, a minute each, the
// SHA-256 checked before the file is kept.
func (f DebianFile) Fetch() (string, error) {
	root, err := CacheRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "debian-sources")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, f.SHA256+"-"+f.Name)
	if sum, err := fileSHA256(path); err == nil && sum == f.SHA256 {
		return path, nil
	}
	var errs []error // the last try's, one per pool
	for try := 0; try < 3; try++ {
		if try > 0 {
			time.Sleep(time.Duration(try) * 5 * time.Second)
		}
		errs = errs[:0]
		for _, url := range f.poolURLs() {
			err := fetchChecked(url, path+".part", f.SHA256)
			if err == nil {
				return path, os.Rename(path+".part", path)
			}
			errs = append(errs, err)
		}
	}
	os.Remove(path + ".part")
	return "", fmt.Errorf("fetching %s: %w", f.Name, errors.Join(errs...))
}

// fetchChecked downloads url to dest and checks its SHA-256 is sum.
func fetchChecked(url, dest, sum string) error {
	if err := download(url, dest); err != nil {
		return err
	}
	got, err := fileSHA256(dest)
	if err != nil || got != sum {
		return fmt.Errorf("%s: SHA-256 %s, Sources says %s (%v)", url, got, sum, err)
	}
	return nil
}

func download(url, dest string) error {
	c := &http.Client{Timeout: time.Minute}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	out, err := os.Create(dest)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.LimitReader(resp.Body, 256<<20)); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// DpkgUpstream asks dpkg-query for a package's version and returns its
// upstream part, the oracle for what the inventory must read.
func DpkgUpstream(t testing.TB, pkg string) string {
	t.Helper()
	out, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", pkg).Output()
	if err != nil {
		t.Fatalf("dpkg-query %s: %v", pkg, err)
	}
	v := string(out)
	if i := strings.IndexByte(v, ':'); i >= 0 {
		v = v[i+1:]
	}
	if i := strings.IndexAny(v, "-+~"); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSuffix(v, ".dfsg")
}
