// libs MODE: a fault inside a library the program calls with a bad
// argument.
//   zlib  uncompress() of a source pointer that is not mapped (load_blob)
//   blas  cblas_dgemm with a NULL matrix (project)
//   hdf5  H5Dwrite from a buffer that is not mapped (save_grid)
#include <cblas.h>
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

static const uintptr_t unmapped = 0x7e5a1234f000ULL;

__attribute__((noinline)) int load_blob(unsigned char *out, unsigned long cap) {
	uLongf n = cap;
	return uncompress(out, &n, (const Bytef *)unmapped, 4096);
}

__attribute__((noinline)) double project(int n) {
	double b[16] = {1}, c[16] = {0};
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, NULL, n, b, n, 0.0, c, n);
	return c[0];
}

__attribute__((noinline)) int save_grid(const char *path) {
	hsize_t dims[1] = {1024};
	hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	hid_t s = H5Screate_simple(1, dims, NULL);
	hid_t d = H5Dcreate2(f, "grid", H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	herr_t e = H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, (const void *)unmapped);
	H5Dclose(d);
	H5Sclose(s);
	H5Fclose(f);
	return (int)e;
}

int main(int argc, char **argv) {
	const char *mode = argc > 1 ? argv[1] : "";
	unsigned char out[8192];
	if (strcmp(mode, "zlib") == 0)
		return load_blob(out, sizeof out);
	if (strcmp(mode, "blas") == 0)
		return (int)project(4);
	if (strcmp(mode, "hdf5") == 0)
		return save_grid("grid.h5");
	return 2;
}
