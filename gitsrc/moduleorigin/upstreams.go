package moduleorigin

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// lib builds a registry entry for a common upstream: its name, repository,
// default branch, tag convention, module file names (a regular expression
// on the base name, "libz\.so" matching libz.so, libz.so.1 and
// libz.so.1.2.13) and Debian source packages.
func lib(name, repo, branch string, tags tagStyle, modules, sources string) RegistryEntry {
	e := RegistryEntry{Name: name, Repo: fixed(repo), Branch: branch, Revisions: releaseTags(tags)}
	if modules != "" {
		e.modules = regexp.MustCompile(`(^|/)(` + modules + `)(\.[0-9][0-9.]*)?$`)
	}
	if sources != "" {
		e.sources = regexp.MustCompile(`^(` + sources + `)$`)
	}
	return e
}

// releaseTags applies a tag style to a release version; a commit (a
// Debian git snapshot) is its own revision.
func releaseTags(tags tagStyle) func(string) []string {
	return func(v string) []string {
		if HexRE.MatchString(v) && !LooksLikeRelease(v) {
			return []string{v}
		}
		return tags(publicVersion(v))
	}
}

// withClues adds the clues that read a release from the module file itself.
func (e RegistryEntry) withClues(file, symbols, text string) RegistryEntry {
	vc := &versionClues{}
	if file != "" {
		vc.file = regexp.MustCompile(file)
	}
	if symbols != "" {
		vc.symbols = regexp.MustCompile(symbols)
	}
	if text != "" {
		vc.text = regexp.MustCompile(text)
	}
	e.Version = vc
	return e
}

// withPython names the Python distributions of the component.
func (e RegistryEntry) withPython(dists ...string) RegistryEntry {
	e.python = dists
	return e
}

// protobufTags: since 3.20 protobuf tags its releases by the minor version
// alone (3.21.12 is v21.12).
func protobufTags(v string) []string {
	f := strings.SplitN(v, ".", 3)
	if len(f) == 3 && f[0] == "3" {
		if mi, err := strconv.Atoi(f[1]); err == nil && mi >= 20 {
			return []string{"v" + f[1] + "." + f[2], "v" + v}
		}
	}
	return vTags(v)
}

// opensslTags: openssl-3.0.11 from 3.0 on, OpenSSL_1_1_1w before.
func opensslTags(v string) []string {
	if strings.HasPrefix(v, "1.") || strings.HasPrefix(v, "0.") {
		return underscoreTags("OpenSSL_")(v)
	}
	return []string{"openssl-" + v}
}

// hdf5Tags: hdf5-1_10_8 up to 1.14.3, hdf5_1.14.4 after.
func hdf5Tags(v string) []string {
	return []string{"hdf5-" + strings.ReplaceAll(v, ".", "_"), "hdf5_" + v}
}

// commonUpstreams are the libraries native and ML/HPC programs link
// besides the ML stacks of registry: repository, default branch, tag
// convention, module names and Debian source packages.
var commonUpstreams = sync.OnceValue(commonUpstreamList)

func commonUpstreamList() []RegistryEntry {
	return []RegistryEntry{
		lib("zlib", "https://github.com/madler/zlib", "develop", vTags, `libz\.so`, `zlib|libzlib`).
			withClues(`^libz\.so\.([0-9]+\.[0-9]+\.[0-9]+(\.[0-9]+)?)$`, `^ZLIB_([0-9.]+)$`, `(?:deflate|inflate) ([0-9]+\.[0-9]+\.[0-9]+(?:\.[0-9]+)?) Copyright`),
		lib("curl", "https://github.com/curl/curl", "master", underscoreTags("curl-"), `libcurl(-gnutls|-nss)?\.so`, `curl|libcurl`).
			withClues("", "", `libcurl/([0-9]+\.[0-9]+\.[0-9]+)`),
		lib("openssl", "https://github.com/openssl/openssl", "master", opensslTags, `lib(ssl|crypto)\.so`, `openssl`).
			withClues("", "", `OpenSSL ([0-9]+\.[0-9]+\.[0-9]+[a-z]?) [0-9]+ [A-Z][a-z]{2} [0-9]{4}`),
		lib("glibc", "https://sourceware.org/git/glibc.git", "master", prefixTags("glibc-"),
			`(libc|libm|libpthread|libdl|librt|libresolv|libutil|libanl|libnss_[a-z]+|libmvec|ld-linux(-x86-64|-aarch64)?)\.so`, `glibc`).
			withClues("", `^GLIBC_([0-9]+\.[0-9]+)$`, `release version ([0-9]+\.[0-9]+)`),
		lib("gcc", "https://gcc.gnu.org/git/gcc.git", "master", prefixTags("releases/gcc-"),
			`(libstdc\+\+|libgcc_s|libgomp|libgfortran|libquadmath|libatomic|libitm|libasan|libubsan|libtsan|liblsan)\.so`, `gcc-[0-9]+|libstdcxx(-ng)?|libgcc(-ng)?|libgomp`),
		lib("cpython", "https://github.com/python/cpython", "main", vTags, `python3\.[0-9]+d?|libpython3\.[0-9]+d?\.so`, `python3\.[0-9]+|python`),
		lib("numpy", "https://github.com/numpy/numpy", "main", vTags, "", `numpy`).withPython("numpy"),
		lib("scipy", "https://github.com/scipy/scipy", "main", vTags, "", `scipy`).withPython("scipy"),
		lib("sqlite", "https://github.com/sqlite/sqlite", "master", prefixTags("version-"), `libsqlite3\.so`, `sqlite3|sqlite|libsqlite`),
		lib("libpng", "https://github.com/pnggroup/libpng", "libpng16", vTags, `libpng1[0-9]\.so`, `libpng1\.[0-9]+`).
			withClues("", "", `libpng version ([0-9]+\.[0-9]+\.[0-9]+)`),
		lib("expat", "https://github.com/libexpat/libexpat", "master", underscoreTags("R_"), `libexpatw?\.so`, `expat|libexpat`).
			withClues("", "", `expat_([0-9]+\.[0-9]+\.[0-9]+)`),
		lib("zstd", "https://github.com/facebook/zstd", "dev", vTags, `libzstd\.so`, `libzstd|zstd`).
			withClues(`^libzstd\.so\.([0-9]+\.[0-9]+\.[0-9]+)$`, "", ""),
		lib("lz4", "https://github.com/lz4/lz4", "dev", vTags, `liblz4\.so`, `lz4|lz4-c`).
			withClues(`^liblz4\.so\.([0-9]+\.[0-9]+\.[0-9]+)$`, "", ""),
		lib("xz", "https://github.com/tukaani-project/xz", "master", vTags, `liblzma\.so`, `xz-utils|xz|liblzma`).
			withClues(`^liblzma\.so\.([0-9]+\.[0-9]+\.[0-9]+)$`, "", ""),
		lib("bzip2", "https://gitlab.com/bzip2/bzip2", "master", prefixTags("bzip2-"), `libbz2\.so`, `bzip2`),
		lib("libffi", "https://github.com/libffi/libffi", "master", vTags, `libffi\.so`, `libffi`),
		lib("protobuf", "https://github.com/protocolbuffers/protobuf", "main", protobufTags, `libprotobuf(-lite)?\.so|libprotoc\.so`, `protobuf|libprotobuf`).withPython("protobuf"),
		lib("abseil", "https://github.com/abseil/abseil-cpp", "master", plainTags, `libabsl_[a-z0-9_]+\.so`, `abseil|libabseil`),
		lib("grpc", "https://github.com/grpc/grpc", "master", vTags, `libgrpc(\+\+)?(_unsecure)?\.so|libgpr\.so`, `grpc|libgrpc`).withPython("grpcio"),
		lib("openblas", "https://github.com/OpenMathLib/OpenBLAS", "develop", vTags, `libopenblas(p|o)?\.so`, `openblas|libopenblas`),
		lib("lapack", "https://github.com/Reference-LAPACK/lapack", "master", vTags, `liblapack\.so|libblas\.so`, `lapack`),
		lib("onnx", "https://github.com/onnx/onnx", "main", vTags, `libonnx(_proto)?\.so`, `onnx`).withPython("onnx"),
		lib("onnxruntime", "https://github.com/microsoft/onnxruntime", "main", vTags, `libonnxruntime\.so`, `onnxruntime`).withPython("onnxruntime", "onnxruntime_gpu"),
		lib("fmt", "https://github.com/fmtlib/fmt", "master", plainTags, `libfmt\.so`, `fmtlib`),
		lib("glog", "https://github.com/google/glog", "master", vTags, `libglog\.so`, `google-glog`),
		lib("gflags", "https://github.com/gflags/gflags", "master", vTags, `libgflags(_nothreads)?\.so`, `gflags`),
		lib("openmpi", "https://github.com/open-mpi/ompi", "main", vTags, `libmpi(_cxx|_mpifh|_usempif08)?\.so|libopen-(pal|rte)\.so`, `openmpi`),
		lib("mpich", "https://github.com/pmodels/mpich", "main", vTags, `libmpich(cxx|fort)?\.so`, `mpich`),
		lib("hwloc", "https://github.com/open-mpi/hwloc", "master", prefixTags("hwloc-"), `libhwloc\.so`, `hwloc`),
		lib("ucx", "https://github.com/openucx/ucx", "master", vTags, `libuc[pst]\.so|libucm\.so`, `ucx`),
		lib("libfabric", "https://github.com/ofiwg/libfabric", "main", vTags, `libfabric\.so`, `libfabric`),
		lib("hdf5", "https://github.com/HDFGroup/hdf5", "develop", hdf5Tags, `libhdf5(_serial|_openmpi|_mpich)?(_hl|_cpp)?\.so`, `hdf5`),
		lib("boost", "https://github.com/boostorg/boost", "master", prefixTags("boost-"), `libboost_[a-z0-9_]+\.so`, `boost1\.[0-9]+`),
		lib("llvm", "https://github.com/llvm/llvm-project", "main", prefixTags("llvmorg-"), `libLLVM(-[0-9]+)?\.so|libclang(-cpp)?(-[0-9]+)?\.so|libomp\.so|libc\+\+(abi)?\.so|libunwind\.so`, `llvm-toolchain-[0-9]+|llvmdev|libllvm[0-9]+|llvm-openmp`),
		lib("sleef", "https://github.com/shibatch/sleef", "master", plainTags, `libsleef\.so`, `sleef`),
		lib("onednn", "https://github.com/oneapi-src/oneDNN", "main", vTags, `libdnnl\.so|libmkldnn\.so`, `onednn`),
		lib("onetbb", "https://github.com/oneapi-src/oneTBB", "master", vTags, `libtbb(malloc)?(_proxy)?\.so`, `onetbb`),
		lib("xnnpack", "https://github.com/google/XNNPACK", "master", vTags, `libXNNPACK\.so|libxnnpack\.so`, `xnnpack`),
		lib("pthreadpool", "https://github.com/Maratyszcza/pthreadpool", "master", vTags, `libpthreadpool\.so`, `pthreadpool`),
		lib("cpuinfo", "https://github.com/pytorch/cpuinfo", "main", vTags, `libcpuinfo\.so`, `cpuinfo`),
		lib("gloo", "https://github.com/facebookincubator/gloo", "main", vTags, `libgloo\.so`, `gloo`),
		lib("tensorpipe", "https://github.com/pytorch/tensorpipe", "main", vTags, `libtensorpipe\.so`, `tensorpipe`),
		lib("opencv", "https://github.com/opencv/opencv", "4.x", plainTags, `libopencv_[a-z0-9_]+\.so`, `opencv`).withPython("opencv_python", "opencv_python_headless"),
		lib("ffmpeg", "https://github.com/FFmpeg/FFmpeg", "master", prefixTags("n"), `lib(avcodec|avformat|avutil|avfilter|avdevice|swscale|swresample|postproc)\.so`, `ffmpeg`),
		lib("libjpeg-turbo", "https://github.com/libjpeg-turbo/libjpeg-turbo", "main", plainTags, `libjpeg\.so|libturbojpeg\.so`, `libjpeg-turbo`),
		lib("libwebp", "https://github.com/webmproject/libwebp", "main", vTags, `libwebp(mux|demux|decoder)?\.so|libsharpyuv\.so`, `libwebp`),
		lib("libtiff", "https://gitlab.com/libtiff/libtiff", "master", vTags, `libtiff\.so`, `tiff`),
		lib("libxml2", "https://gitlab.gnome.org/GNOME/libxml2.git", "master", vTags, `libxml2\.so`, `libxml2`),
		lib("pcre2", "https://github.com/PCRE2Project/pcre2", "master", prefixTags("pcre2-"), `libpcre2-(8|16|32|posix)\.so`, `pcre2`),
		lib("libuv", "https://github.com/libuv/libuv", "v1.x", vTags, `libuv\.so`, `libuv1`),
		lib("nghttp2", "https://github.com/nghttp2/nghttp2", "master", vTags, `libnghttp2\.so`, `nghttp2`),
		lib("brotli", "https://github.com/google/brotli", "master", vTags, `libbrotli(common|dec|enc)\.so`, `brotli`),
		lib("snappy", "https://github.com/google/snappy", "main", plainTags, `libsnappy\.so`, `snappy`).
			withClues(`^libsnappy\.so\.([0-9]+\.[0-9]+\.[0-9]+)$`, "", ""),
		lib("leveldb", "https://github.com/google/leveldb", "main", plainTags, `libleveldb\.so`, `leveldb`),
		lib("zeromq", "https://github.com/zeromq/libzmq", "master", vTags, `libzmq\.so`, `zeromq3`),
		lib("libunwind", "https://github.com/libunwind/libunwind", "master", vTags, `libunwind(-x86_64|-generic|-ptrace|-coredump)?\.so`, `libunwind`),
		lib("elfutils", "https://sourceware.org/git/elfutils.git", "master", prefixTags("elfutils-"), `lib(elf|dw|asm)\.so`, `elfutils`),
		lib("util-linux", "https://github.com/util-linux/util-linux", "master", vTags, `lib(uuid|blkid|mount|smartcols|fdisk)\.so`, `util-linux`),
		lib("systemd", "https://github.com/systemd/systemd", "main", vTags, `lib(systemd|udev)\.so`, `systemd`),
		lib("numactl", "https://github.com/numactl/numactl", "master", vTags, `libnuma\.so`, `numactl`),
		lib("yaml-cpp", "https://github.com/jbeder/yaml-cpp", "master", prefixTags("yaml-cpp-"), `libyaml-cpp\.so`, `yaml-cpp`),
		lib("eigen", "https://gitlab.com/libeigen/eigen.git", "master", plainTags, "", `eigen3`),
	}
}
