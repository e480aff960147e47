# gitsrc's real-release upstream histories (gitsrc/gitsrctest: zlib from
# Debian's 1.2.11, 1.2.13 and 1.3.1 releases and the upstream fixes of
# 1:1.2.11.dfsg-2+deb11u2): Debian's source files, fetched from
# deb.debian.org into $FAULTLINE_TEST_CACHE/debian-sources/SHA256-NAME with
# three tries each, kept only when their SHA-256 is the one the suite's
# Sources index gives (TestUpstreamFilesListed keeps this list and
# gitsrctest.DebianFiles the same). git builds the histories, gcc and gdb
# the crash.
apt_install git gcc gdb curl xz-utils bzip2
upstream_files=(
	"z/zlib zlib_1.2.11.dfsg.orig.tar.gz 80c481411a4fe8463aeb8270149a0e80bb9eaf7da44132b6e16f2b5af01bc899"
	"z/zlib zlib_1.2.11.dfsg-2+deb11u2.debian.tar.xz c19794df214f0c2571b19f7dea853c066410232abe9f0ddad77231fabccde0da"
	"z/zlib zlib_1.2.13.dfsg.orig.tar.bz2 71feb7947e3c00ef125f83b79a4e529bde31171e5babe48b391f06758d1ab0a1"
	"z/zlib zlib_1.3.dfsg+really1.3.1.orig.tar.gz 60dd315c07f616887caa029408308a018ace66e3d142726a97db164b3b8f69fb"
)
mkdir -p "$FAULTLINE_TEST_CACHE/debian-sources"
for entry in "${upstream_files[@]}"; do
	read -r pool name sum <<<"$entry"
	dest=$FAULTLINE_TEST_CACHE/debian-sources/$sum-$name
	[ -f "$dest" ] && echo "$sum  $dest" | sha256sum -c --quiet - 2>/dev/null && continue
	ok=
	for try in 1 2 3; do
		if curl -fsS --max-time 120 -o "$dest.part" "http://deb.debian.org/debian/pool/main/$pool/$name" &&
			echo "$sum  $dest.part" | sha256sum -c --quiet -; then
			mv "$dest.part" "$dest"
			ok=1
			break
		fi
		sleep $((try * 5))
	done
	rm -f "$dest.part"
	[ -n "$ok" ] || { echo "upstreams.sh: could not fetch $name from deb.debian.org" >&2; exit 1; }
done
