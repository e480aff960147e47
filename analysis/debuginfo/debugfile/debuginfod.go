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
// A server that fails at the connection level, or sends less than 100 KiB
// a second for Timeout (elfutils' DEBUGINFOD_TIMEOUT), is marked down and
// not asked again by this client: a server that is down or slow costs one
// timeout per session, not one per module. All the downloads of one client
// (one dump) together stop after Total. Fetch is safe for concurrent use;
// concurrent fetches of one artifact share one request.
type Debuginfod struct {
	// URLs are the servers, tried in order (DEBUGINFOD_URLS).
	URLs []string
	// CacheDir holds downloaded files (DEBUGINFOD_CACHE_PATH, else
	// $XDG_CACHE_HOME/debuginfod_client, else ~/.cache/debuginfod_client).
	CacheDir string
	// Timeout is elfutils' DEBUGINFOD_TIMEOUT (seconds; default 10s here,
	// 90 s in elfutils): a server whose transfer, from the request on, stays
	// under 100 KiB a second for this long is skipped and marked down
	// (debuginfod-client.c: CURLOPT_LOW_SPEED_LIMIT 100*1024 for
	// CURLOPT_LOW_SPEED_TIME timeout). A server that drips bytes is cut off
	// after Timeout, not kept alive by each byte.
	Timeout time.Duration
	// MaxSize caps one download (DEBUGINFOD_MAXSIZE; default 4 GiB).
	MaxSize int64
	// Progress, when set, is told about each download as it starts and ends.
	Progress func(message string)
	// MaxTime bounds one download from its request to its last byte
	// (DEBUGINFOD_MAXTIME seconds; default DefaultDebuginfodMaxTime): a
	// server fast enough for Timeout's rule but never done is cut off and
	// marked down.
	MaxTime time.Duration
	// Total bounds all the downloads of this client together, from its
	// first request (FAULTLINE_DEBUGINFOD_TOTAL seconds; default
	// DefaultDebuginfodTotal): a client serves one dump, so a dump whose
	// hundreds of modules each meet a slow server costs at most Total.
	Total time.Duration
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
	deadline time.Time // first request + Total
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
	DefaultDebuginfodTotal   = 10 * time.Minute
	defaultMaxSize           = 4 << 30
)

// lowSpeedLimit is elfutils' progress rule for DEBUGINFOD_TIMEOUT: "a
// server that fails to provide at least 100K of data within this many
// seconds is skipped" (debuginfod-client-config(7)).
const lowSpeedLimit = 100 << 10

// ErrBudgetSpent is returned once a client's Total is spent.
var ErrBudgetSpent = errors.New("debuginfod time for this dump spent")

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
	if s, err := strconv.Atoi(os.Getenv("FAULTLINE_DEBUGINFOD_TOTAL")); err == nil && s > 0 {
		d.Total = time.Duration(s) * time.Second
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
	dl := &download{d: d, parent: parent, server: server, u: u, start: time.Now()}
	dl.timeout, dl.maxTime, dl.maxSize = d.limits()
	budget, ok := d.budgetDeadline(dl.start)
	if !ok {
		return "", fmt.Errorf("%s: %w (%v, FAULTLINE_DEBUGINFOD_TOTAL)", u, ErrBudgetSpent, d.total())
	}
	deadline := dl.start.Add(dl.maxTime)
	if budget.Before(deadline) {
		deadline, dl.byBudget = budget, true
	}
	var cancel context.CancelFunc
	dl.ctx, cancel = context.WithDeadline(parent, deadline)
	defer cancel()
	req, err := http.NewRequestWithContext(dl.ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	for k, vs := range d.Headers {
		req.Header[k] = vs
	}
	req.Header.Set("User-Agent", "faultline")
	stop := make(chan struct{})
	defer close(stop)
	go dl.watchSpeed(stop, cancel)
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

// budgetDeadline is when the client's Total ends (counted from its first
// request) and whether now is before it.
func (d *Debuginfod) budgetDeadline(now time.Time) (time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.deadline.IsZero() {
		d.deadline = now.Add(d.total())
	}
	return d.deadline, now.Before(d.deadline)
}

func (d *Debuginfod) total() time.Duration {
	if d.Total > 0 {
		return d.Total
	}
	return DefaultDebuginfodTotal
}

// limits are the client's low-speed time, time for a whole download and
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

// download is one GET of get, bounded in time, speed and size.
type download struct {
	d                *Debuginfod
	parent, ctx      context.Context // the caller's; the one bounded by maxTime and Total
	server, u        string
	start            time.Time
	timeout, maxTime time.Duration
	maxSize          int64
	byBudget         bool         // ctx ends with the client's Total, before maxTime
	received         atomic.Int64 // body bytes so far
	answered         atomic.Bool  // the response headers arrived
	tooSlow          atomic.Bool  // watchSpeed cancelled ctx
}

// speedWindow is how far back the transfer speed is measured (curl's
// current speed averages the last 5 seconds).
const speedWindow = 5 * time.Second

// watchSpeed cancels the download once its speed, measured over the last
// speedWindow, has stayed under lowSpeedLimit for the timeout, counted
// from the request: curl's low-speed check, as elfutils sets it up for
// DEBUGINFOD_TIMEOUT. A server that never answers, or drips a byte now and
// then, is cut off after the timeout.
func (dl *download) watchSpeed(stop <-chan struct{}, cancel func()) {
	tick := time.NewTicker(max(min(time.Second, dl.timeout/4), 10*time.Millisecond))
	defer tick.Stop()
	type sample struct {
		at time.Time
		n  int64
	}
	samples := []sample{{dl.start, 0}}
	slowSince := dl.start
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			n := dl.received.Load()
			samples = append(samples, sample{now, n})
			for len(samples) > 2 && now.Sub(samples[1].at) >= speedWindow {
				samples = samples[1:]
			}
			old := samples[0]
			if float64(n-old.n) >= lowSpeedLimit*now.Sub(old.at).Seconds() {
				slowSince = time.Time{}
				continue
			}
			if slowSince.IsZero() {
				slowSince = now
			}
			if now.Sub(slowSince) >= dl.timeout {
				dl.tooSlow.Store(true)
				cancel()
				return
			}
		}
	}
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
		if err = dl.why(err); dl.parent.Err() == nil && !errors.Is(err, ErrBudgetSpent) {
			dl.d.markDown(dl.server, err)
		}
		return nil, fmt.Errorf("%s: %w", dl.server, err)
	}
	dl.answered.Store(true)
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

// why names the limit that ended a download that failed with err.
func (dl *download) why(err error) error {
	switch {
	case dl.tooSlow.Load() && !dl.answered.Load():
		return fmt.Errorf("no answer within %v", dl.timeout)
	case dl.tooSlow.Load():
		return fmt.Errorf("less than 100 KiB a second for %v (DEBUGINFOD_TIMEOUT)", dl.timeout)
	case dl.parent.Err() == nil && dl.ctx.Err() != nil && dl.byBudget:
		return fmt.Errorf("%w (%v, FAULTLINE_DEBUGINFOD_TOTAL)", ErrBudgetSpent, dl.d.total())
	case dl.parent.Err() == nil && dl.ctx.Err() != nil:
		return fmt.Errorf("download not done within %v (DEBUGINFOD_MAXTIME)", dl.maxTime)
	}
	return err
}

// save writes body into cached through a temporary file and returns its
// size. A download too slow for the timeout, or not done within
// DEBUGINFOD_MAXTIME, marks the server down.
func (dl *download) save(body io.Reader, cached string) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(cached), 0o755); err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(cached), ".tmp-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, &countingReader{r: io.LimitReader(body, dl.maxSize+1), n: &dl.received})
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if err = dl.why(err); dl.parent.Err() == nil && dl.ctx.Err() != nil && !errors.Is(err, ErrBudgetSpent) {
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

// countingReader adds the bytes it reads to n (the speed watch reads it).
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n.Add(int64(k))
	return k, err
}
