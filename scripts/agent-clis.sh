#!/usr/bin/env bash
# The agent CLIs coder_eval drives besides Claude Code (which ships inside claude-agent-sdk):
# - OpenCode and Gemini CLI from npm, pinned by package-lock.json, into ./node_modules (`npm install`:
#   `npm ci` refuses a lockfile without the other platforms' optional binaries). Install
#   scripts are skipped: both CLIs ship their programs inside registry packages, so nothing is
#   built or downloaded (coder_eval starts OpenCode's platform binary directly);
# - the Codex CLI comes from PyPI (openai-codex-cli-bin, in the `agents` extra that `dev` includes);
# - ripgrep, which OpenCode's skill and search tools need, from Debian when missing and we may.
# A missing npm or apt is not fatal: the agents' tests then skip with a reason that says what to install.
set -u
cd "$(dirname "$0")/.."
if command -v npm >/dev/null 2>&1; then
  npm install --no-save --no-audit --no-fund --ignore-scripts --loglevel=error \
    || echo "agent-clis: npm install failed; the opencode and gemini agents will not find their CLIs" >&2
else
  echo "agent-clis: npm not found; install Node.js >= 20 for the opencode and gemini agents" >&2
fi
command -v rg >/dev/null 2>&1 && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "agent-clis: ripgrep missing (OpenCode's skill tool needs it): sudo apt-get install -y ripgrep" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends ripgrep >/dev/null 2>&1 \
  || { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends ripgrep >/dev/null; } \
  || echo "agent-clis: could not install ripgrep; OpenCode's skill tool will fail" >&2
