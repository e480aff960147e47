package logs

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The faulthandler outputs in testdata/python/cores are real: each job's
// stderr from the crash whose core sits next to it (testdata/python/gen.sh).
const pythonCores = "../../testdata/python/cores"

func TestParseFaulthandlerRealOutputs(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(pythonCores, "*.faulthandler.txt"))
	if len(files) == 0 {
		t.Fatal("no faulthandler outputs in testdata/python/cores")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			log, err := ParseFaulthandler(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if log.Error != "Segmentation fault" || log.Signal != "SIGSEGV" {
				t.Errorf("error %q signal %q", log.Error, log.Signal)
			}
			// Every "File" line of the output is a frame of some thread,
			// and exactly one thread is current.
			var frames, current int
			for _, th := range log.Threads {
				frames += len(th.Frames)
				if th.Current {
					current++
				}
				if th.ID == 0 {
					t.Errorf("thread without an id")
				}
			}
			if want := strings.Count(string(b), "\n  File \""); frames != want {
				t.Errorf("%d frames, the output has %d File lines", frames, want)
			}
			if want := strings.Count(string(b), "Thread 0x") + strings.Count(string(b), "Current thread 0x"); len(log.Threads) != want || current != 1 {
				t.Errorf("%d threads (%d current), want %d (1 current)", len(log.Threads), current, want)
			}
			job := strings.SplitN(filepath.Base(file), ".", 2)[0] + ".py"
			for _, th := range log.Threads {
				if th.Current {
					for _, f := range th.Frames {
						if filepath.Base(f.File) == job {
							if !strings.Contains(jobLine(t, job, f.Line), "# CRASH") {
								t.Errorf("current thread's first %s frame is line %d, not the CRASH line", job, f.Line)
							}
							break
						}
					}
				}
			}
		})
	}
}

// jobLine returns line n of a job script (read from the checkout, wherever
// the log's absolute path pointed).
func jobLine(t *testing.T, job string, n int) string {
	b, err := os.ReadFile(filepath.Join("../../testdata/python", job))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	if n < 1 || n > len(lines) {
		return ""
	}
	return lines[n-1]
}

func TestParseFaulthandlerPrefixesAndTimeout(t *testing.T) {
	in := "[rank1]: Timeout (0:00:05)!\n" +
		"[rank1]: Thread 0x00007f0000000001 (most recent call first):\n" +
		"[rank1]:   File \"/job/train.py\", line 7 in step\n" +
		"[rank1]:   File \"/job/train.py\", line 12 in <module>\n"
	log, err := ParseFaulthandler(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if log.Prefix != "[rank1]:" || log.Error != "Timeout (0:00:05)!" || log.Signal != "" {
		t.Errorf("%+v", log)
	}
	if len(log.Threads) != 1 || len(log.Threads[0].Frames) != 2 || log.Threads[0].Frames[0].Line != 7 {
		t.Errorf("threads %+v", log.Threads)
	}
}

func TestParseFaulthandlerRejectsOtherText(t *testing.T) {
	for _, in := range []string{"", "hello\n", "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nValueError\n"} {
		if _, err := ParseFaulthandler(strings.NewReader(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func TestParseTracebacksRealLog(t *testing.T) {
	b, err := os.ReadFile("../../testdata/python/logs/exception.txt")
	if err != nil {
		t.Fatal(err)
	}
	log, err := ParseTracebacks(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Tracebacks) != 3 {
		t.Fatalf("%d tracebacks, want 3 (thread, cause, final)", len(log.Tracebacks))
	}
	th, cause, final := log.Tracebacks[0], log.Tracebacks[1], log.Tracebacks[2]
	if th.Thread != "prefetch" || th.Exception != "KeyError: 'shard'" || th.Chained != "" {
		t.Errorf("thread traceback %+v", th)
	}
	if cause.Chained != "cause" || !strings.HasPrefix(cause.Exception, "json.decoder.JSONDecodeError: ") {
		t.Errorf("cause %+v", cause)
	}
	if final.Exception != "RuntimeError: bad config" || log.Final() != &log.Tracebacks[2] {
		t.Errorf("final %+v", final)
	}
	// Innermost first; the count matches the File lines of each block.
	if n := strings.Count(string(b), "\n  File \""); len(th.Frames)+len(cause.Frames)+len(final.Frames) != n {
		t.Errorf("frames %d+%d+%d, the log has %d File lines", len(th.Frames), len(cause.Frames), len(final.Frames), n)
	}
	if f := final.Frames[0]; f.Function != "load_config" || !strings.Contains(f.Source, "raise RuntimeError") {
		t.Errorf("final innermost frame %+v", f)
	}
	if f := final.Frames[len(final.Frames)-1]; f.Function != "<module>" {
		t.Errorf("final outermost frame %+v", f)
	}
}

func TestParseTracebacksRejectsOtherText(t *testing.T) {
	if _, err := ParseTracebacks(strings.NewReader("Fatal Python error: Aborted\n\nThread 0x1 (most recent call first):\n")); err == nil {
		t.Error("no error")
	}
}
