#!/usr/bin/env bash
# The real-editor stage: Neovim 0.7/0.10/0.12 and VS Code (code-server in
# headless Chromium) against the real server (editors/test.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
exec bash editors/test.sh
