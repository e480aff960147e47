# The ML and HPC runtimes issue 23's crash kinds are tested against
# (analysis/realworld): gfortran (libgfortran's re-raising handler), Debian's
# rustc (panic=abort), Open MPI, R, pybind11 with CPython's headers; HDF5,
# protobuf, OpenBLAS, zlib and python3-torch (faults inside libraries that
# are not the program's own); clang's sanitizers and CFI. Each program is
# built and crashed into a real core by its test.
apt_install gfortran rustc openmpi-bin libopenmpi-dev r-base-core pybind11-dev python3-dev \
	libhdf5-dev libprotobuf-dev protobuf-compiler libopenblas-dev zlib1g-dev clang python3-torch python3-numpy
# clang's sanitizer and CFI runtimes (not a dependency of clang on bookworm:
# without them -fsanitize=address does not link).
apt_install libclang-rt-14-dev
