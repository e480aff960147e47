package debugfile

import (
	"bufio"
	"io"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/faultline-dev/faultline/analysis/regular"
)

// What the debuginfod client remembers between runs besides the files it
// fetched, as elfutils' client does (debuginfod-client.c): an artifact no
// server has is recorded as an empty file in its place, and not asked for
// again until it is older than cache_miss_s seconds, a number kept in a
// file of that name in the cache directory (600 when there is none).

// DefaultCacheMiss is elfutils' default cache_miss_s.
const DefaultCacheMiss = 600 * time.Second

// cacheMiss is how long a miss is remembered: d.CacheMiss if set, else
// the cache directory's cache_miss_s, else the default.
func (d *Debuginfod) cacheMiss() time.Duration {
	if d.CacheMiss != 0 {
		return d.CacheMiss
	}
	b, err := regular.ReadFile(filepath.Join(d.cacheDir(), "cache_miss_s"), 64)
	if err != nil {
		return DefaultCacheMiss
	}
	s, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || s < 0 {
		return DefaultCacheMiss
	}
	return time.Duration(s) * time.Second
}

// missRemembered reports whether an empty cache file records a miss that
// is still fresh.
func (d *Debuginfod) missRemembered(st os.FileInfo) bool {
	ttl := d.cacheMiss()
	return ttl > 0 && time.Since(st.ModTime()) < ttl
}

// rememberMiss records that no server has the artifact cached names.
func (d *Debuginfod) rememberMiss(cached string) {
	if d.cacheMiss() <= 0 || os.MkdirAll(filepath.Dir(cached), 0o755) != nil {
		return
	}
	// O_NONBLOCK: a FIFO in the cache's place fails (ENXIO) instead of
	// waiting for a reader.
	if f, err := os.OpenFile(cached, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NONBLOCK, 0o644); err == nil {
		f.Close()
	}
	// elfutils writes cache_miss_s with its default when it is missing,
	// so that users find the setting.
	p := filepath.Join(d.cacheDir(), "cache_miss_s")
	if _, err := os.Stat(p); os.IsNotExist(err) {
		os.WriteFile(p, []byte(strconv.Itoa(int(DefaultCacheMiss/time.Second))+"\n"), 0o644)
	}
}

// maxHeadersFile caps the headers file read.
const maxHeadersFile = 64 << 10

// readHeadersFile reads DEBUGINFOD_HEADERS_FILE: one "Name: value" per
// line; lines without a colon are skipped, as elfutils skips them.
func readHeadersFile(path string) http.Header {
	f, _, err := regular.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	h := http.Header{}
	sc := bufio.NewScanner(io.LimitReader(f, maxHeadersFile))
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			continue
		}
		h.Add(textproto.CanonicalMIMEHeaderKey(name), strings.TrimSpace(value))
	}
	return h
}
