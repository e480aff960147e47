#!/usr/bin/env bash
# Prints the directory the tests must run in. Checked-in corpora (cores made
# against this machine's system libraries) are used as they are when each
# generator's --check says they match; otherwise the checkout is copied into
# the test cache and the stale corpora are regenerated THERE, never over
# tracked files, and kept by content hash: the hash of the corpus's tracked
# files plus the build-ids of the libraries it was checked against. A second
# run on the same machine reuses them.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
source "$repo/.ci/lib.sh"
corpora=(native python aarch64 debuginfo)

stale=()
for c in "${corpora[@]}"; do
	rc=0
	bash "$repo/testdata/$c/gen.sh" --check >&2 || rc=$?
	case $rc in
	0) ;;
	3) stale+=("$c") ;;
	*) echo "corpora: testdata/$c/gen.sh --check failed ($rc)" >&2; exit 1 ;;
	esac
done
if [ ${#stale[@]} -eq 0 ]; then
	echo "$repo"
	exit 0
fi

# A copy of the tree as it is (tracked files and untracked ones git does not
# ignore), so uncommitted work is tested too.
# One copy per checkout, so test commands of two checkouts can run at once.
tree=$FAULTLINE_TEST_CACHE/tree-$(printf %s "$repo" | sha256sum | cut -c1-12)
rm -rf "$tree" && mkdir -p "$tree"
(cd "$repo" && git ls-files -z -co --exclude-standard | tar --null --ignore-failed-read -T - -cf -) | tar -xf - -C "$tree"
# What the install step put in the checkout and git ignores (npm packages,
# the editor stage's tools) serves the copy too.
(cd "$repo" && find . -path ./.git -prune -o \( -name node_modules -o -path ./editors/.tools \) -type d -prune -print) |
	while read -r d; do
		mkdir -p "$tree/$(dirname "$d")"
		ln -sfn "$repo/${d#./}" "$tree/$d"
	done
for c in "${stale[@]}"; do
	key=$( { (cd "$repo" && git ls-files -s -- "testdata/$c"); readelf -n /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 /usr/bin/python3 /usr/aarch64-linux-gnu/lib/libc.so.6 2>/dev/null | grep 'Build ID'; } | sha256sum | cut -c1-16)
	cached=$FAULTLINE_TEST_CACHE/corpora/$c-$key
	if [ -d "$cached" ]; then
		# The libraries a generator checks can change without the key
		# seeing it (a moving suite's packages): check the cached copy too.
		rm -rf "${tree:?}/testdata/$c" && cp -a "$cached" "$tree/testdata/$c"
		bash "$tree/testdata/$c/gen.sh" --check >&2 || rm -rf "$cached"
	fi
	if [ ! -d "$cached" ]; then
		log "regenerating testdata/$c into the test cache" >&2
		bash "$tree/testdata/$c/gen.sh" >&2
		rm -rf "$cached.tmp" && mkdir -p "$(dirname "$cached")"
		cp -a "$tree/testdata/$c" "$cached.tmp"
		rm -rf "$cached" && mv "$cached.tmp" "$cached"
	else
		log "testdata/$c: regenerated corpus from the test cache ($cached)" >&2
	fi
	rm -rf "${tree:?}/testdata/$c" && cp -a "$cached" "$tree/testdata/$c"
done
echo "$tree"
