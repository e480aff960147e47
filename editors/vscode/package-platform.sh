#!/usr/bin/env bash
# package-platform.sh TARGET: a platform-specific .vsix with the faultline
# server inside (bin/faultline), as rust-analyzer and clangd ship theirs, so
# the extension needs nothing on PATH. TARGET is a vsce target: linux-x64 or
# linux-arm64. Writes faultline-TARGET.vsix here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
target=${1:?usage: package-platform.sh linux-x64|linux-arm64}
case $target in
linux-x64) goarch=amd64 ;;
linux-arm64) goarch=arm64 ;;
*) echo "package-platform.sh: unsupported target $target" >&2; exit 2 ;;
esac
cd "$here"
rm -rf bin && mkdir -p bin
(cd ../.. && CGO_ENABLED=0 GOOS=linux GOARCH=$goarch go build -trimpath -o "$here/bin/faultline" .)
npm run -s build
cp ../../LICENSE LICENSE
npx vsce package --no-dependencies --target "$target" -o "faultline-$target.vsix"
rm -rf bin
