/* crashlibs: crashes inside one of Debian's shared libraries, chosen by
 * the first argument: zlib (crc32 over a bad pointer), curl
 * (curl_easy_perform on a bad handle), expat (XML_Parse on a bad parser).
 * gitsrc's TestDebianLibrariesIdentified builds it against the machine's
 * zlib1g, libcurl4 and libexpat1 and crashes it into one core per library. */
#include <curl/curl.h>
#include <expat.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

static void *bad(void) { return (void *)(uintptr_t)16; }

int main(int argc, char **argv)
{
	const char *lib = argc > 1 ? argv[1] : "zlib";
	if (strcmp(lib, "zlib") == 0)
		return (int)crc32(0, bad(), 64);
	if (strcmp(lib, "curl") == 0)
		return (int)curl_easy_perform(bad());
	if (strcmp(lib, "expat") == 0)
		return (int)XML_Parse(bad(), "<a/>", 4, 1);
	return 2;
}
