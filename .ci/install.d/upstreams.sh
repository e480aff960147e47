# gitsrc's real-release upstream histories (gitsrc/gitsrctest: zlib, expat
# and snappy from Debian's releases of bullseye, bookworm and trixie and the
# upstream fixes Debian applied): Debian's source files, fetched from
# deb.debian.org into $FAULTLINE_TEST_CACHE/debian-sources/SHA256-NAME with
# three tries each, kept only when their SHA-256 is the one the suite's
# Sources index gives (TestUpstreamFilesListed keeps this list and
# gitsrctest.DebianFiles the same). git builds the histories, gcc and gdb
# the crash.
apt_install git gcc g++ gdb curl xz-utils bzip2
upstream_files=(
	"z/zlib zlib_1.2.11.dfsg.orig.tar.gz 80c481411a4fe8463aeb8270149a0e80bb9eaf7da44132b6e16f2b5af01bc899"
	"z/zlib zlib_1.2.11.dfsg-2+deb11u2.debian.tar.xz c19794df214f0c2571b19f7dea853c066410232abe9f0ddad77231fabccde0da"
	"z/zlib zlib_1.2.13.dfsg.orig.tar.bz2 71feb7947e3c00ef125f83b79a4e529bde31171e5babe48b391f06758d1ab0a1"
	"z/zlib zlib_1.3.dfsg+really1.3.1.orig.tar.gz 60dd315c07f616887caa029408308a018ace66e3d142726a97db164b3b8f69fb"
	"e/expat expat_2.2.10.orig.tar.gz 62e280f5fd29a5b70973f623e20a7412c3e3912c2684cb0e462e2c881be129e1"
	"e/expat expat_2.2.10-2+deb11u5.debian.tar.xz b24f586a155c207b2dbf6db1b6e4106427150acdd3a654c00c52d400da70d23d"
	"e/expat expat_2.5.0.orig.tar.gz ab00ee05c7067fd10a35c5d2a4922ebba746ddd50ff83b79c828da17bbdf1757"
	"e/expat expat_2.7.1.orig.tar.gz 85372797ff0673a8fc4a6be16466bb5a0ca28c0dcf3c6f7ac1686b4a3ba2aabb"
	"s/snappy snappy_1.1.9.orig.tar.gz 75c1fbb3d618dd3a0483bff0e26d0a92b495bbe5059c8b4f1c962b478b6e06e7"
	"s/snappy snappy_1.1.9-3.debian.tar.xz 78d8c910467ab2b8c7434a200167ba9cae7b7ade6f931bf7c8ea3f2fcc50e4af"
	"s/snappy snappy_1.2.2.orig.tar.gz 90f74bc1fbf78a6c56b3c4a082a05103b3a56bb17bca1a27e052ea11723292dc"
)
# Where a file may be: a security upload (+debNNuN) is in the security
# archive too, and once a newer upload or the suite's archiving drops it from
# deb.debian.org's pool, archive.debian.org keeps it. The SHA-256 decides.
debian_pools=(
	http://deb.debian.org/debian/pool/main
	http://deb.debian.org/debian-security/pool/updates/main
	http://archive.debian.org/debian/pool/main
	http://archive.debian.org/debian-security/pool/updates/main
)
mkdir -p "$FAULTLINE_TEST_CACHE/debian-sources"
for entry in "${upstream_files[@]}"; do
	read -r pool name sum <<<"$entry"
	dest=$FAULTLINE_TEST_CACHE/debian-sources/$sum-$name
	[ -f "$dest" ] && echo "$sum  $dest" | sha256sum -c --quiet - 2>/dev/null && continue
	ok=
	for try in 1 2 3; do
		for url in "${debian_pools[@]}"; do
			if curl -fsS --max-time 120 -o "$dest.part" "$url/$pool/$name" 2>/dev/null &&
				echo "$sum  $dest.part" | sha256sum -c --quiet -; then
				mv "$dest.part" "$dest"
				ok=1
				break 2
			fi
		done
		sleep $((try * 5))
	done
	rm -f "$dest.part"
	[ -n "$ok" ] || { echo "upstreams.sh: could not fetch $name with SHA-256 $sum from ${debian_pools[*]}" >&2; exit 1; }
done
