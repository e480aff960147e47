#!/usr/bin/env bash
# Reads "PATH BUILD-ID" lines on stdin (the files a checked-in test corpus's
# cores were made with) and prints, space-separated, the paths whose GNU
# build-id on this machine differs or that are missing: the corpus
# generators' --if-stale check. Prints nothing when everything matches.
set -euo pipefail
stale=""
while read -r path id; do
  [ -n "$path" ] || continue
  have=$(readelf -n "$path" 2>/dev/null | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p' | head -n1 || true)
  [ "$have" = "$id" ] || stale="$stale $path"
done
echo "${stale# }"
