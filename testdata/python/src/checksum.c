/* checksum: a plain C library (not a Python extension) that flaky.py calls
 * through ctypes, so the crash reached through ctypes happens in code built
 * here: its frames and the run's signature do not depend on the build of
 * Debian's python3.11, _ctypes or libffi. */

struct batch {
	long n;
	const unsigned char *bytes;
};

/* Not static and not inlined: both frames show up by name. */
__attribute__((noinline)) unsigned byte_at(const struct batch *b, long i)
{
	return b->bytes[i]; /* b->bytes is NULL */
}

__attribute__((noinline)) unsigned checksum(const struct batch *b)
{
	unsigned sum = 0;
	for (long i = 0; i < b->n; i++)
		sum = sum * 31 + byte_at(b, i);
	return sum;
}
