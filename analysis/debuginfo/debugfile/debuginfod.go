package debugfile

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Debuginfod is a client of debuginfod servers (elfutils debuginfod(8),
// "WEBAPI"): GET /buildid/BUILDID/debuginfo, /buildid/BUILDID/executable
// and /buildid/BUILDID/source/ABSOLUTE-PATH from each server in turn,
// results kept in a cache laid out as elfutils' client lays it out
// (CACHE/BUILDID/debuginfo, CACHE/BUILDID/executable,
// CACHE/BUILDID/source#PATH#WITH#SLASHES#ESCAPED), so that faultline, gdb
// and eu-stack share one cache.
//
// A server that fails at the connection level or does not answer within
// Timeout is marked down and not asked again by this client: a server that
// is down or slow costs one timeout per session, not one per module.
// Fetch is safe for concurrent use; concurrent fetches of one artifact
// share one request.
type Debuginfod struct {
	// URLs are the servers, tried in order (DEBUGINFOD_URLS).
	URLs []string
	// CacheDir holds downloaded files (DEBUGINFOD_CACHE_PATH, else
	// $XDG_CACHE_HOME/debuginfod_client, else ~/.cache/debuginfod_client).
	CacheDir string
	// Timeout bounds each request until the response headers arrive and each
	// pause in the body (DEBUGINFOD_TIMEOUT seconds; default 10s).
	Timeout time.Duration
	// MaxSize caps one download (DEBUGINFOD_MAXSIZE; default 4 GiB).
	MaxSize int64
	// Progress, when set, is told about each download as it starts and ends.
	Progress func(message string)
	// MaxTime bounds one download from its request to its last byte
	// (DEBUGINFOD_MAXTIME seconds; default DefaultDebuginfodMaxTime): a
	// server that keeps a download alive by dripping bytes, re-arming
	// Timeout's stall timer forever, is cut off and marked down.
	MaxTime time.Duration
	// Headers are added to every request (DEBUGINFOD_HEADERS_FILE: one
	// "Name: value" per line, as elfutils reads it).
	Headers http.Header
	// CacheMiss is how long a "not found" answer is remembered (elfutils'
	// cache_miss_s file in the cache directory, default 600 s); a negative
	// value asks again every time.
	CacheMiss time.Duration
	// Client is the HTTP client (default: one without a global timeout, as
	// bodies of large debug files may take long; Timeout bounds stalls).
	Client *http.Client

	mu       sync.Mutex
	down     map[string]error
	inflight map[string]*fetchCall
}

type fetchCall struct {
	done chan struct{}
	path string
	err  error
}

// ErrNotFound is returned when no server has the artifact.
var ErrNotFound = errors.New("not found on any debuginfod server")

// Default limits.
const (
	DefaultDebuginfodTimeout = 10 * time.Second
	DefaultDebuginfodMaxTime = 5 * time.Minute
	defaultMaxSize           = 4 << 30
)

// NewDebuginfodFromEnv configures a client from the environment as elfutils
// does: DEBUGINFOD_URLS (space-separated) and the settings NewDebuginfod
// reads. It returns nil when no server is configured.
func NewDebuginfodFromEnv() *Debuginfod {
	return NewDebuginfod(strings.Fields(os.Getenv("DEBUGINFOD_URLS")))
}

// NewDebuginfod configures a client for urls (DEBUGINFOD_URLS or --debuginfod)
// with the limits of the environment, as elfutils reads them: the cache
// (DEBUGINFOD_CACHE_PATH), DEBUGINFOD_TIMEOUT, DEBUGINFOD_MAXSIZE,
// DEBUGINFOD_MAXTIME and DEBUGINFOD_HEADERS_FILE. It returns nil for no URLs.
func NewDebuginfod(urls []string) *Debuginfod {
	if len(urls) == 0 {
		return nil
	}
	d := &Debuginfod{URLs: urls, CacheDir: DefaultDebuginfodCache()}
	if s, err := strconv.Atoi(os.Getenv("DEBUGINFOD_TIMEOUT")); err == nil && s > 0 {
		d.Timeout = time.Duration(s) * time.Second
	}
	if n, err := strconv.ParseInt(os.Getenv("DEBUGINFOD_MAXSIZE"), 10, 64); err == nil && n > 0 {
		d.MaxSize = n
	}
	if s, err := strconv.Atoi(os.Getenv("DEBUGINFOD_MAXTIME")); err == nil && s > 0 {
		d.MaxTime = time.Duration(s) * time.Second
	}
	if f := os.Getenv("DEBUGINFOD_HEADERS_FILE"); f != "" {
		d.Headers = readHeadersFile(f)
	}
	return d
}

// DefaultDebuginfodCache is the cache directory elfutils' client uses.
func DefaultDebuginfodCache() string {
	if p := os.Getenv("DEBUGINFOD_CACHE_PATH"); p != "" {
		return p
	}
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "debuginfod_client")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".cache", "debuginfod_client")
	}
	return filepath.Join(os.TempDir(), "debuginfod_client")
}

// Artifact kinds of the webapi.
const (
	KindDebuginfo  = "debuginfo"
	KindExecutable = "executable"
	KindSource     = "source"
)

// Fetch returns the path of the cached artifact for buildID: kind is
// KindDebuginfo, KindExecutable or KindSource (then source is the absolute
// path the DWARF names). It downloads it first if the cache lacks it.
func (d *Debuginfod) Fetch(ctx context.Context, buildID []byte, kind, source string) (string, error) {
	if d == nil || len(d.URLs) == 0 {
		return "", ErrNotFound
	}
	if len(buildID) == 0 {
		return "", errors.New("debuginfod: no build-id")
	}
	id := hex.EncodeToString(buildID)
	rel := kind
	if kind == KindSource {
		if !strings.HasPrefix(source, "/") {
			return "", fmt.Errorf("debuginfod: source path %q is not absolute", source)
		}
		rel = "source" + strings.ReplaceAll(source, "/", "#")
	}
	cached := filepath.Join(d.cacheDir(), id, rel)
	if st, err := os.Stat(cached); err == nil && st.Mode().IsRegular() {
		if st.Size() > 0 {
			return cached, nil
		}
		if d.missRemembered(st) {
			return "", ErrNotFound
		}
	}

	d.mu.Lock()
	if d.inflight == nil {
		d.inflight = map[string]*fetchCall{}
	}
	if c, ok := d.inflight[cached]; ok {
		d.mu.Unlock()
		select {
		case <-c.done:
			return c.path, c.err
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	c := &fetchCall{done: make(chan struct{})}
	d.inflight[cached] = c
	d.mu.Unlock()

	c.path, c.err = d.download(ctx, id, kind, source, cached)
	if errors.Is(c.err, ErrNotFound) && len(d.Down()) == 0 { // every server said so
		d.rememberMiss(cached)
	}
	close(c.done)
	d.mu.Lock()
	delete(d.inflight, cached)
	d.mu.Unlock()
	return c.path, c.err
}

func (d *Debuginfod) cacheDir() string {
	if d.CacheDir != "" {
		return d.CacheDir
	}
	return DefaultDebuginfodCache()
}

// Down lists the servers this client stopped asking, with why.
func (d *Debuginfod) Down() map[string]error {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]error, len(d.down))
	for k, v := range d.down {
		out[k] = v
	}
	return out
}

func (d *Debuginfod) isDown(server string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.down[server]
	return ok
}

func (d *Debuginfod) markDown(server string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.down == nil {
		d.down = map[string]error{}
	}
	if _, ok := d.down[server]; !ok {
		d.down[server] = err
	}
}

// download asks each live server in turn and stores the first answer.
func (d *Debuginfod) download(ctx context.Context, id, kind, source, cached string) (string, error) {
	var errs []error
	for _, server := range d.URLs {
		if d.isDown(server) {
			continue
		}
		u := strings.TrimRight(server, "/") + "/buildid/" + id + "/" + kind
		if kind == KindSource {
			u += (&url.URL{Path: source}).EscapedPath()
		}
		path, err := d.get(ctx, server, u, cached)
		if err == nil {
			return path, nil
		}
		if !errors.Is(err, ErrNotFound) {
			errs = append(errs, err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) > 0 {
		return "", fmt.Errorf("debuginfod %s/%s: %w", id, kind, errors.Join(errs...))
	}
	return "", ErrNotFound
}

// get downloads one URL into cached (atomically, through a temporary file).
func (d *Debuginfod) get(parent context.Context, server, u, cached string) (string, error) {
	dl := &download{d: d, parent: parent, server: server, u: u}
	dl.timeout, dl.maxTime, dl.maxSize = d.limits()
	var cancel context.CancelFunc
	dl.ctx, cancel = context.WithTimeout(parent, dl.maxTime)
	defer cancel()
	req, err := http.NewRequestWithContext(dl.ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	for k, vs := range d.Headers {
		req.Header[k] = vs
	}
	req.Header.Set("User-Agent", "faultline")
	// The timer bounds the wait for headers, then each stall of the body.
	dl.timer = time.AfterFunc(dl.timeout, func() { dl.timedOut.Store(true); cancel() })
	defer dl.timer.Stop()
	resp, err := dl.do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	n, err := dl.save(resp.Body, cached)
	if err != nil {
		return "", err
	}
	if d.Progress != nil {
		d.Progress(fmt.Sprintf("debuginfod: fetched %s (%d bytes)", u, n))
	}
	return cached, nil
}

// limits are the client's per-stall timeout, time for a whole download and
// largest answer, defaults filled in.
func (d *Debuginfod) limits() (timeout, maxTime time.Duration, maxSize int64) {
	timeout, maxTime, maxSize = d.Timeout, d.MaxTime, d.MaxSize
	if timeout <= 0 {
		timeout = DefaultDebuginfodTimeout
	}
	if maxTime <= 0 {
		maxTime = DefaultDebuginfodMaxTime
	}
	if maxSize <= 0 {
		maxSize = defaultMaxSize
	}
	return timeout, maxTime, maxSize
}

// download is one GET of get, bounded in time and size.
type download struct {
	d                *Debuginfod
	parent, ctx      context.Context // the caller's; the one bounded by maxTime
	server, u        string
	timeout, maxTime time.Duration
	maxSize          int64
	timer            *time.Timer // cancels ctx after timeout without progress
	timedOut         atomic.Bool
}

// do sends the request and returns the answer if it is a 200 of an
// allowed size. A server that does not answer is marked down.
func (dl *download) do(req *http.Request) (*http.Response, error) {
	client := dl.d.Client
	if client == nil {
		client = http.DefaultClient
	}
	if dl.d.Progress != nil {
		dl.d.Progress("debuginfod: fetching " + dl.u)
	}
	resp, err := client.Do(req)
	if err != nil {
		if dl.timedOut.Load() {
			err = fmt.Errorf("no answer within %v", dl.timeout)
		}
		if dl.parent.Err() == nil {
			dl.d.markDown(dl.server, err)
		}
		return nil, fmt.Errorf("%s: %w", dl.server, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		err = ErrNotFound
	case resp.StatusCode != http.StatusOK:
		err = fmt.Errorf("%s: %s", dl.u, resp.Status)
	case resp.ContentLength > dl.maxSize:
		err = fmt.Errorf("%s: %d bytes is more than the %d allowed (DEBUGINFOD_MAXSIZE)", dl.u, resp.ContentLength, dl.maxSize)
	}
	if err != nil {
		resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

// save writes body into cached through a temporary file and returns its
// size. A stalled or too slow download marks the server down.
func (dl *download) save(body io.Reader, cached string) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(cached), 0o755); err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(cached), ".tmp-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, &stallReader{r: io.LimitReader(body, dl.maxSize+1), timer: dl.timer, timeout: dl.timeout})
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		switch {
		case dl.timedOut.Load():
			err = fmt.Errorf("download stalled for %v", dl.timeout)
			dl.d.markDown(dl.server, err)
		case dl.parent.Err() == nil && dl.ctx.Err() != nil:
			err = fmt.Errorf("download not done within %v (DEBUGINFOD_MAXTIME)", dl.maxTime)
			dl.d.markDown(dl.server, err)
		}
		return 0, fmt.Errorf("%s: %w", dl.u, err)
	}
	if n > dl.maxSize {
		return 0, fmt.Errorf("%s: more than the %d bytes allowed (DEBUGINFOD_MAXSIZE)", dl.u, dl.maxSize)
	}
	if n == 0 {
		return 0, fmt.Errorf("%s: empty answer", dl.u)
	}
	if err := os.Rename(tmp.Name(), cached); err != nil {
		return 0, err
	}
	return n, nil
}

// stallReader re-arms the stall timer on every read that makes progress.
type stallReader struct {
	r       io.Reader
	timer   *time.Timer
	timeout time.Duration
}

func (s *stallReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.timer.Reset(s.timeout)
	}
	return n, err
}
