package gitsrctest

// Snappy (C++; tags 1.1.9 as google/snappy tags its releases; default
// branch main) from Debian's sources: 1.1.9 (bookworm), the upstream fix
// Debian applies to it (4728803c, AdvanceToNextTag inline with
// SNAPPY_ATTRIBUTE_ALWAYS_INLINE, a format-patch naming its commit on its
// first line) and 1.2.2 (trixie). The crash: snappy::Compress given a Sink
// whose buffer points nowhere writes into it in
// snappy::internal::CompressFragment, which 1.2.2 changed and the fix did
// not.

var (
	snappyOrig119 = DebianFile{"snappy", "snappy_1.1.9.orig.tar.gz", "75c1fbb3d618dd3a0483bff0e26d0a92b495bbe5059c8b4f1c962b478b6e06e7"}
	snappyPatches = DebianFile{"snappy", "snappy_1.1.9-3.debian.tar.xz", "78d8c910467ab2b8c7434a200167ba9cae7b7ade6f931bf7c8ea3f2fcc50e4af"}
	snappyOrig122 = DebianFile{"snappy", "snappy_1.2.2.orig.tar.gz", "90f74bc1fbf78a6c56b3c4a082a05103b3a56bb17bca1a27e052ea11723292dc"}
	snappyAuthor  = "Victor Costan <costan@google.com>"
	snappyHistory = History{Name: "snappy", Branch: "main", Steps: []Step{
		{Release: &Release{Tag: "1.1.9", Orig: snappyOrig119, Author: snappyAuthor, Date: "2021-05-04T22:53:34+00:00", Message: "Tag open source release 1.1.9."}},
		{Fix: &Fix{Set: snappyPatches, Name: "0001-Add-inline-with-SNAPPY_ATTRIBUTE_ALWAYS_INLINE.patch"}},
		{Release: &Release{Tag: "1.2.2", Orig: snappyOrig122, Author: snappyAuthor, Date: "2025-03-26T08:00:00+00:00", Message: "Tag open source release 1.2.2."}},
	}}
)

// snappyConfig is what snappy's CMake configuration writes on Debian.
const snappyConfig = `#define HAVE_ATTRIBUTE_ALWAYS_INLINE 1
#define HAVE_BUILTIN_CTZ 1
#define HAVE_BUILTIN_EXPECT 1
#define HAVE_FUNC_MMAP 1
#define HAVE_FUNC_SYSCONF 1
#define HAVE_SYS_MMAN_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_UIO_H 1
#define HAVE_UNISTD_H 1
#define SNAPPY_HAVE_SSSE3 0
#define SNAPPY_HAVE_BMI2 0
`

// snappyStubs is snappy-stubs-public.h as CMake makes it from its .in.
const snappyStubs = `#ifndef THIRD_PARTY_SNAPPY_OPENSOURCE_SNAPPY_STUBS_PUBLIC_H_
#define THIRD_PARTY_SNAPPY_OPENSOURCE_SNAPPY_STUBS_PUBLIC_H_
#include <cstddef>
#include <sys/uio.h>
#define SNAPPY_MAJOR 1
#define SNAPPY_MINOR 1
#define SNAPPY_PATCHLEVEL 9
#define SNAPPY_VERSION ((SNAPPY_MAJOR << 16) | (SNAPPY_MINOR << 8) | SNAPPY_PATCHLEVEL)
namespace snappy {
using ::iovec;
}
#endif
`

// SnappyCrashSource compresses into a Sink whose buffer points nowhere.
const SnappyCrashSource = `#include <cstdio>
#include <string>
#include "snappy.h"
#include "snappy-sinksource.h"

class NowhereSink : public snappy::Sink {
 public:
  void Append(const char *, size_t) override {}
  char *GetAppendBuffer(size_t, char *) override { return reinterpret_cast<char *>(16); }
};

int main() {
  std::string text(4096, 'x');
  for (size_t i = 0; i < text.size(); i++) text[i] = "faultline"[i % 9];
  snappy::ByteArraySource source(text.data(), text.size());
  NowhereSink sink;
  std::printf("%zu\n", snappy::Compress(&source, &sink));
}
`

var snappyBuild = LibBuild{History: snappyHistory, Tag: "1.1.9", Prefix: "snappy-1.1.9",
	Files:   map[string]string{"config.h": snappyConfig, "snappy-stubs-public.h": snappyStubs},
	Sources: []string{"snappy.cc", "snappy-sinksource.cc", "snappy-stubs-internal.cc", "snappy-c.cc"},
	CFlags:  []string{"-DHAVE_CONFIG_H", "-I."}, Lib: "libsnappy.so.1.1.9", Soname: "libsnappy.so.1",
	Program: "scrash.cc", ProgramSource: SnappyCrashSource, Link: "-lsnappy"}

// Snappy builds snappy's history, libsnappy 1.1.9 and its crash.
func Snappy() (*LibCrash, error) { return snappyBuild.Build() }
