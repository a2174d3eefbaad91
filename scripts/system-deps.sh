#!/usr/bin/env bash
# Debian packages the test suite uses: chromium (widget tests in a real browser), bubblewrap
# (the bwrap sandbox driver) and docker.io (the docker driver; its tests start dockerd themselves
# through scripts/dockerd.sh and stop it after). Installed when missing and we may; otherwise the
# tests that need them skip with a reason that says how to install them.
set -u
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "system-deps: missing ${missing[*]}; install them with: sudo apt-get install -y ${missing[*]}" >&2
  exit 0
fi
echo "system-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null \
  || echo "system-deps: could not install ${missing[*]}; the tests that need them will skip" >&2
