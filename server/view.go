package server

import (
	"bytes"
	"io"
	"path/filepath"
	"sort"
	"sync"
	"unicode/utf8"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/regular"
)

// maxSourceBytes caps how much of a source file is read to compute ranges.
const maxSourceBytes = 16 << 20

// site is one frame of a thread placed in a local file.
type site struct {
	thread *analysis.Thread
	frame  *analysis.Frame
	path   string  // local file; "" when the frame resolves nowhere
	uri    uri.URI // of path
	line   uint32  // 0-based
}

// lineKey names one line of one local file.
type lineKey struct {
	path string
	line uint32
}

// view is the crash as the editor sees it, computed once per load, thread
// selection or settings change, and read-only afterwards: every request is a
// few map lookups.
type view struct {
	crash   *analysis.Crash
	src     *loaded          // the open dump; nil while only the crashing thread is known
	thread  *analysis.Thread // the selected thread
	culprit int              // frame index of the culprit in thread
	values  ValueReader      // nil when values cannot be read
	res     *resolver

	sites      []site             // the selected thread's frames, by index
	byLine     map[lineKey][]int  // selected thread: frame indexes per line
	stops      map[lineKey][]stop // every thread: first frame per thread per line
	files      map[string]*sourceFile
	unresolved []string // file names of selected-thread frames that resolve nowhere
	// systemFiles are the unresolved files of system libraries' frames
	// (libc's exit.c), each with its module: noted once per session.
	systemFiles map[string]string

	// gpu are the GPU fault's inline levels that have a line, innermost
	// first, and gpuByLine their indexes per local line (see gpu.go).
	gpu       []gpuSite
	gpuByLine map[lineKey][]int
	// upstream are the reviewed functions of fetched checkouts, by local
	// path (see upstream.go); empty until faultline.fetchSources ran.
	upstream map[string][]upstreamFunc

	memoMu sync.Mutex
	hovers map[lineKey]string // hover markdown per line, built on first use
}

// stop is a thread stopping at a line, at frame index frame.
type stop struct {
	thread int
	frame  int
}

// newView builds the view of crash with thread selected (0: the crashing
// one). When src has fetched sources, their upstream reviews are placed
// too; the caller holds Server.mu (src.sources is guarded by it).
func newView(crash *analysis.Crash, src *loaded, selected int, res *resolver, values ValueReader) *view {
	v := &view{
		crash:     crash,
		src:       src,
		res:       res,
		values:    values,
		byLine:    map[lineKey][]int{},
		stops:     map[lineKey][]stop{},
		files:     map[string]*sourceFile{},
		hovers:    map[lineKey]string{},
		gpuByLine: map[lineKey][]int{},
		upstream:  map[string][]upstreamFunc{},
	}
	v.placeGPU()
	if src != nil {
		v.placeUpstream(src.sources)
	}
	v.thread = crash.Thread(selected)
	if v.thread == nil {
		v.thread = crash.Thread(crash.CrashingThreadID)
	}
	if v.thread == nil && len(crash.Threads) > 0 {
		v.thread = &crash.Threads[0]
	}
	if v.thread == nil {
		return v
	}
	v.culprit = culpritFrame(crash, v.thread)
	missing := map[string]bool{}
	for ti := range crash.Threads {
		t := &crash.Threads[ti]
		seen := map[lineKey]bool{}
		for fi := range t.Frames {
			fr := &t.Frames[fi]
			s := site{thread: t, frame: fr}
			if s.path = res.Resolve(fr, localExe(crash)); s.path != "" && fr.Line > 0 {
				s.uri = uri.File(s.path)
				s.line = uint32(fr.Line - 1)
				k := lineKey{s.path, s.line}
				if !seen[k] {
					seen[k] = true
					v.stops[k] = append(v.stops[k], stop{thread: t.ID, frame: fr.Index})
				}
			} else {
				s.path = ""
			}
			if t != v.thread {
				continue
			}
			v.sites = append(v.sites, s)
			if s.path != "" {
				k := lineKey{s.path, s.line}
				v.byLine[k] = append(v.byLine[k], fi)
				if v.files[s.path] == nil {
					v.files[s.path] = readSource(s.path)
				}
			} else if fr.File != "" && !missing[fr.File] {
				missing[fr.File] = true
				v.unresolved = append(v.unresolved, fr.File)
				v.noteSystemFile(fr)
			}
		}
	}
	sort.Strings(v.unresolved)
	return v
}

// culpritFrame is the index of the frame of t the crash is blamed on: the
// classification's culprit (the first frame of the program's own code) on
// the crashing thread, frame 0 when there is no classification, -1 on other
// threads and on the host thread of a GPU fault (the culprit is then the
// innermost GPU inline level).
func culpritFrame(c *analysis.Crash, t *analysis.Thread) int {
	if t.ID != c.CrashingThreadID || len(t.Frames) == 0 {
		return -1
	}
	if cl := c.Classification; cl != nil && cl.CulpritFrame >= 0 && cl.CulpritFrame < len(t.Frames) {
		return cl.CulpritFrame
	}
	if c.GPU != nil && len(c.GPU.Frames) > 0 {
		// The fault is on the device: the host thread only launched it.
		return -1
	}
	return 0
}

// at returns the selected thread's frame indexes on the given line of path.
func (v *view) at(path string, line uint32) []int {
	return v.byLine[lineKey{path, line}]
}

// lineRange is the range of a frame's line: from its column (or the first
// non-blank character) to the end of the line, in UTF-16 code units
// (LSP 3.17 §"Position": the default position encoding).
func (v *view) lineRange(s site) protocol.Range {
	r := protocol.Range{Start: protocol.Position{Line: s.line}, End: protocol.Position{Line: s.line}}
	f := v.files[s.path]
	if f == nil {
		f = readSource(s.path)
	}
	text := f.line(int(s.line))
	if text == nil {
		return r
	}
	start := 0
	for start < len(text) && (text[start] == ' ' || text[start] == '\t') {
		start++
	}
	if c := s.frame.Column - 1; c > start && c < len(text) {
		start = c
	}
	r.Start.Character = utf16Len(text[:start])
	r.End.Character = utf16Len(text)
	return r
}

// endOfLine is the position after the last character of s's line.
func (v *view) endOfLine(s site) protocol.Position {
	return v.lineRange(s).End
}

// sourceFile is a source file's lines, for ranges.
type sourceFile struct{ lines [][]byte }

func readSource(path string) *sourceFile {
	f, _, err := regular.Open(filepath.Clean(path)) // a path from DWARF: never a FIFO or a device
	if err != nil {
		return &sourceFile{}
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, maxSourceBytes))
	lines := bytes.Split(b, []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimSuffix(l, []byte("\r"))
	}
	return &sourceFile{lines: lines}
}

func (f *sourceFile) line(i int) []byte {
	if i < 0 || i >= len(f.lines) {
		return nil
	}
	return f.lines[i]
}

// utf16Len counts b's characters in UTF-16 code units.
func utf16Len(b []byte) uint32 {
	n := uint32(0)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
