#!/usr/bin/env bash
# Debian packages the test suite uses: chromium (widget tests in a real browser), bubblewrap
# (the bwrap sandbox driver), docker.io (the docker driver; its tests start dockerd themselves
# through scripts/dockerd.sh and stop it after) and iproute2 (`ip`: the network namespaces of the
# executor tests' separate hosts). Installed when missing and we may; otherwise the
# tests that need them skip with a reason that says how to install them.
# With package names as arguments only those are checked: `make run` needs bubblewrap alone.
#   bash scripts/system-deps.sh              # chromium, bubblewrap, docker.io, iproute2
#   bash scripts/system-deps.sh bubblewrap
set -u
command_of() { case "$1" in chromium) echo chromium ;; bubblewrap) echo bwrap ;; docker.io) echo dockerd ;; iproute2) echo ip ;; esac; }
wanted=("$@")
[ ${#wanted[@]} -eq 0 ] && wanted=(chromium bubblewrap docker.io iproute2)
missing=()
for package in "${wanted[@]}"; do
  program=$(command_of "$package")
  if [ -z "$program" ]; then echo "system-deps: unknown package $package" >&2; exit 2; fi
  command -v "$program" >/dev/null 2>&1 || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "system-deps: missing ${missing[*]}; install them with: sudo apt-get install -y ${missing[*]}" >&2
  exit 0
fi
echo "system-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null \
  || echo "system-deps: could not install ${missing[*]}; what needs them will skip or fall back" >&2
