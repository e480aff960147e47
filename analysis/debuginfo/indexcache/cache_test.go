package indexcache

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func payload(key string, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31) ^ key[i%len(key)]
	}
	return b
}

func TestPutGet(t *testing.T) {
	c := New(t.TempDir(), 0)
	want := payload("abc", 100000)
	if err := c.Put("abc", want); err != nil {
		t.Fatal(err)
	}
	e := c.Get("abc")
	if e == nil || !bytes.Equal(e.Data, want) {
		t.Fatalf("Get after Put: %v", e)
	}
	e.Close()
	if c.Get("other") != nil {
		t.Error("Get of a key never stored hit")
	}
	if err := c.Put("../escape", want); err != ErrBadKey {
		t.Errorf("Put with a path in the key: %v", err)
	}
	var nilCache *Cache
	if nilCache.Get("abc") != nil || nilCache.Put("abc", want) != nil {
		t.Error("a nil cache stores or finds something")
	}
}

// TestDamagedEntry: every kind of damage is a miss that deletes the entry,
// and the next Put rebuilds it.
func TestDamagedEntry(t *testing.T) {
	damage := map[string]func([]byte) []byte{
		"payload bit flip": func(b []byte) []byte { b[len(b)-100] ^= 0x10; return b },
		"header version":   func(b []byte) []byte { b[8]++; return b },
		"truncated":        func(b []byte) []byte { return b[:len(b)-1] },
		"extended":         func(b []byte) []byte { return append(b, 0) },
		"key changed":      func(b []byte) []byte { b[headerSize] = 'X'; return b },
		"empty":            func(b []byte) []byte { return nil },
	}
	for name, fn := range damage {
		t.Run(name, func(t *testing.T) {
			c := New(t.TempDir(), 0)
			want := payload("k1", 4096)
			if err := c.Put("k1", want); err != nil {
				t.Fatal(err)
			}
			p := c.path("k1")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, fn(b), 0o644); err != nil {
				t.Fatal(err)
			}
			if e := c.Get("k1"); e != nil {
				t.Fatalf("damaged entry trusted: %d bytes", len(e.Data))
			}
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Errorf("damaged entry not deleted: %v", err)
			}
			if err := c.Put("k1", want); err != nil {
				t.Fatal(err)
			}
			if e := c.Get("k1"); e == nil || !bytes.Equal(e.Data, want) {
				t.Error("entry not rebuilt after damage")
			}
		})
	}
}

// TestLRUBound: the directory stays within its bound, and the entry used
// most recently survives while the least recently used one goes.
func TestLRUBound(t *testing.T) {
	dir := t.TempDir()
	c := New(dir, 3*(10000+headerSize+2)+100)
	old := time.Now().Add(-time.Hour)
	for i, k := range []string{"k0", "k1", "k2"} {
		if err := c.Put(k, payload(k, 10000)); err != nil {
			t.Fatal(err)
		}
		ts := old.Add(time.Duration(i) * time.Minute)
		os.Chtimes(c.path(k), ts, ts)
	}
	if e := c.Get("k0"); e == nil { // k0 becomes the most recently used
		t.Fatal("k0 missing before the bound is reached")
	} else {
		e.Close()
	}
	if err := c.Put("k3", payload("k3", 10000)); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]bool{"k0": true, "k1": false, "k2": true, "k3": true} {
		_, err := os.Stat(c.path(k))
		if got := err == nil; got != want {
			t.Errorf("%s present = %v, want %v", k, got, want)
		}
	}
	if c.Put("huge", payload("huge", 1<<20)) != nil || c.Get("huge") != nil {
		t.Error("an entry larger than the bound was stored")
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"": 0, "123": 123, "64K": 64 << 10, "2m": 2 << 20, "4G": 4 << 30} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	if _, err := ParseSize("x"); err == nil {
		t.Error("ParseSize(x) accepted")
	}
	if Resolve("off", 0) != nil {
		t.Error("off does not disable the cache")
	}
	t.Setenv("XDG_CACHE_HOME", "/x")
	if d := Resolve("", 0).Dir(); d != "/x/faultline/index" {
		t.Errorf("default dir %q", d)
	}
}

// TestTwoProcesses: two processes storing and reading the same keys (and
// trimming a small cache) at once never see a partial or foreign entry.
func TestTwoProcesses(t *testing.T) {
	dir := t.TempDir()
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for w := 0; w < 2; w++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "INDEXCACHE_WORKER="+strconv.Itoa(w), "INDEXCACHE_DIR="+dir)
		out := &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("worker %d: %v\n%s", i, err, outs[i])
		}
		if !bytes.Contains(outs[i].Bytes(), []byte("hits=")) {
			t.Errorf("worker %d did not report: %s", i, outs[i])
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".tmp-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestMain runs as one process of TestTwoProcesses when asked to.
func TestMain(m *testing.M) {
	if w := os.Getenv("INDEXCACHE_WORKER"); w != "" {
		if err := worker(w, os.Getenv("INDEXCACHE_DIR")); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// worker stores and reads overlapping keys in a cache too small for all.
func worker(w, dir string) error {
	c := New(dir, 6*(50000+headerSize+8))
	hits := 0
	for i := 0; i < 200; i++ {
		k := fmt.Sprintf("key%d", i%9)
		if err := c.Put(k, payload(k, 50000)); err != nil {
			return fmt.Errorf("worker %s Put %s: %v", w, k, err)
		}
		r := fmt.Sprintf("key%d", (i+4)%9)
		if e := c.Get(r); e != nil {
			if !bytes.Equal(e.Data, payload(r, 50000)) {
				return fmt.Errorf("worker %s read a wrong entry for %s", w, r)
			}
			hits++
			e.Close()
		}
	}
	if hits == 0 {
		return fmt.Errorf("worker %s never hit", w)
	}
	fmt.Printf("worker %s hits=%d\n", w, hits)
	return nil
}

// TestPartialVerify: GetPartial checks chunks only as far as they are
// read; a damaged chunk past that costs nothing until it is reached, and
// then the entry is deleted.
func TestPartialVerify(t *testing.T) {
	c := New(t.TempDir(), 0)
	want := payload("part", 3*chunkSize+100)
	if err := c.Put("part", want); err != nil {
		t.Fatal(err)
	}
	p := c.path("part")
	b, _ := os.ReadFile(p)
	b[len(b)-chunkSize-50] ^= 1 // in the third chunk
	os.WriteFile(p, b, 0o644)
	e := c.GetPartial("part")
	if e == nil || e.Size() != len(want) {
		t.Fatal("GetPartial rejected an entry whose header is intact")
	}
	defer e.Close()
	if got, ok := e.Verified(2 * chunkSize); !ok || !bytes.Equal(got, want[:2*chunkSize]) {
		t.Fatal("the first two chunks did not verify")
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal("entry deleted before its damaged chunk was read")
	}
	if _, ok := e.Verified(e.Size()); ok {
		t.Fatal("a damaged chunk verified")
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("damaged entry not deleted: %v", err)
	}
	if c.Get("part") != nil {
		t.Error("Get found the damaged entry")
	}
}
