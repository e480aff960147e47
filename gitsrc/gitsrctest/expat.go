package gitsrctest

// Expat (C; tags R_2_2_10 as libexpat/libexpat tags its releases; default
// branch master; the library in expat/lib of the repository) from
// Debian's sources: 2.2.10 (bullseye), the 24 upstream fixes Debian
// applied to it in 2.2.10-2+deb11u5 that name their upstream commit
// (CVE-2021-45960, CVE-2022-22822…CVE-2022-25315), 2.5.0 (bookworm) and
// 2.7.1 (trixie). The crash: XML_Parse given a buffer that points nowhere
// copies it into the parser's buffer (memcpy, from XML_Parse).

var (
	expatOrig2210 = DebianFile{"expat", "expat_2.2.10.orig.tar.gz", "62e280f5fd29a5b70973f623e20a7412c3e3912c2684cb0e462e2c881be129e1"}
	expatPatches  = DebianFile{"expat", "expat_2.2.10-2+deb11u5.debian.tar.xz", "b24f586a155c207b2dbf6db1b6e4106427150acdd3a654c00c52d400da70d23d"}
	expatOrig250  = DebianFile{"expat", "expat_2.5.0.orig.tar.gz", "ab00ee05c7067fd10a35c5d2a4922ebba746ddd50ff83b79c828da17bbdf1757"}
	expatOrig271  = DebianFile{"expat", "expat_2.7.1.orig.tar.gz", "85372797ff0673a8fc4a6be16466bb5a0ca28c0dcf3c6f7ac1686b4a3ba2aabb"}
)

// expatFixes are the patches of 2.2.10-2+deb11u5's series that name their
// upstream commit, in the series' order.
var expatFixes = []string{
	"lib-Detect-and-prevent-troublesome-left-shifts-in-fu.patch",
	"lib-Prevent-integer-overflow-on-m_groupSize-in-funct.patch",
	"lib-Prevent-integer-overflow-at-multiple-places-CVE-.patch",
	"lib-Detect-and-prevent-integer-overflow-in-XML_GetBu.patch",
	"tests-Cover-integer-overflow-in-XML_GetBuffer-CVE-20.patch",
	"lib-Prevent-integer-overflow-in-doProlog-CVE-2022-23.patch",
	"Prevent-stack-exhaustion-in-build_model.patch",
	"Prevent-integer-overflow-in-storeRawNames.patch",
	"Prevent-integer-overflow-in-copyString.patch",
	"lib-Fix-harmless-use-of-uninitialized-memory.patch",
	"lib-Protect-against-malicious-namespace-declarations.patch",
	"tests-Cover-CVE-2022-25236.patch",
	"lib-Drop-unused-macro-UTF8_GET_NAMING.patch",
	"lib-Add-missing-validation-of-encoding-CVE-2022-2523.patch",
	"lib-Add-comments-to-BT_LEAD-cases-where-encoding-has.patch",
	"tests-Cover-missing-validation-of-encoding-CVE-2022-.patch",
	"Fix-build_model-regression.patch",
	"tests-Protect-against-nested-element-declaration-mod.patch",
	"lib-Relax-fix-to-CVE-2022-25236-with-regard-to-RFC-3.patch",
	"tests-Cover-relaxed-fix-to-CVE-2022-25236.patch",
	"lib-Document-namespace-separator-effect-right-in-hea.patch",
	"lib-doc-Add-a-note-on-namespace-URI-validation.patch",
	"lib-Fix-overeager-DTD-destruction-in-XML_ExternalEnt.patch",
	"tests-Cover-overeager-DTD-destruction-in-XML_Externa.patch",
}

// ExpatHistory is expat's history as Debian's sources give it.
var ExpatHistory = func() History {
	h := History{Name: "libexpat", Branch: "master"}
	pipping := "Sebastian Pipping <sebastian@pipping.org>"
	h.Steps = append(h.Steps, Step{Release: &Release{Tag: "R_2_2_10", Orig: expatOrig2210, Author: pipping,
		Date: "2020-10-03T17:14:51+02:00", Message: "Release 2.2.10"}})
	for _, p := range expatFixes {
		h.Steps = append(h.Steps, Step{Fix: &Fix{Set: expatPatches, Name: p}})
	}
	return append2(h,
		Step{Release: &Release{Tag: "R_2_5_0", Orig: expatOrig250, Author: pipping, Date: "2022-10-25T17:09:49+02:00", Message: "Release 2.5.0"}},
		Step{Release: &Release{Tag: "R_2_7_1", Orig: expatOrig271, Author: pipping, Date: "2025-03-27T21:53:22+01:00", Message: "Release 2.7.1"}})
}()

func append2(h History, s ...Step) History {
	h.Steps = append(h.Steps, s...)
	return h
}

// expatConfig is what expat's configure finds on Debian, as a header.
const expatConfig = `#define BYTEORDER 1234
#define HAVE_GETRANDOM 1
#define HAVE_SYSCALL_GETRANDOM 1
#define HAVE_MEMMOVE 1
#define HAVE_STDINT_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_UNISTD_H 1
#define XML_CONTEXT_BYTES 1024
#define XML_DTD 1
#define XML_NS 1
#define XML_DEV_URANDOM 1
`

// ExpatCrashSource hands XML_Parse a buffer that points nowhere.
const ExpatCrashSource = `#include <expat.h>

int main(void)
{
    XML_Parser parser = XML_ParserCreate(NULL);
    return XML_Parse(parser, (const char *)16, 4096, 1);
}
`

var expatBuild = LibBuild{History: ExpatHistory, Tag: "R_2_2_10", Prefix: "expat-2.2.10", Dir: "expat/lib",
	Files: map[string]string{"expat_config.h": expatConfig}, Sources: []string{"xmlparse.c", "xmlrole.c", "xmltok.c"},
	CFlags: []string{"-DHAVE_EXPAT_CONFIG_H", "-I."}, Lib: "libexpat.so.1.6.12", Soname: "libexpat.so.1",
	Program: "xcrash.c", ProgramSource: ExpatCrashSource, Link: "-lexpat"}

// Expat builds expat's history, libexpat 2.2.10 and its crash.
func Expat() (*LibCrash, error) { return expatBuild.Build() }
