#!/usr/bin/env bash
# Install coder_eval (editable) with the given extras into a virtualenv, creating it when missing.
#   bash scripts/install.sh .venv analysis          # make run: the core and the analysis extra
#   bash scripts/install.sh .venv analysis,agents   # make run AGENT=codex: the Codex CLI too
#   bash scripts/install.sh .venv dev               # make check and make setup: everything
#   PYTHON=python3.12 bash scripts/install.sh DIR --packages harbor==0.25.0
#                                                   # a fresh venv of packages alone, compiled (tests)
# With uv (PyPI's `uv`) the install takes seconds: uv on PATH is used, else it is installed once with
# pip into a tool folder outside the clone ($CODER_EVAL_TOOLS, default ~/.cache/coder_eval/tools).
# uv is told the package index pip is configured with (`pip config list`: index-url,
# extra-index-url, find-links, constraint, cert, trusted-host, timeout, the files and PIP_* variables
# alike) and picks the best version across all of them, as pip does. Without uv (none installable,
# or CODER_EVAL_NO_UV=1), or when uv fails, pip installs.
# The dev set is compiled after it is installed, the project's own modules with it: pip writes the
# bytecode of what it installs, uv does not, and neither compiles what an earlier install left. The
# tests start hundreds of Python processes, and where PYTHONDONTWRITEBYTECODE is set (as in many
# containers) nothing is ever cached, so each would compile all it imports (pandas, SciPy and
# statsmodels: 9-12 s instead of about 3). `make run` skips it: the demo's few processes gain about
# 3%, and the bytecode would add 200 MB to its 1 GB .venv.
set -u
venv=$1 extras=$2
shift 2
python=${PYTHON:-python3}
cd "$(dirname "$0")/.."
tools=${CODER_EVAL_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/coder_eval/tools}

find_uv() {
  [ "${CODER_EVAL_NO_UV:-}" = 1 ] && return 1
  if command -v uv >/dev/null 2>&1; then command -v uv; return 0; fi
  if [ ! -x "$tools/bin/uv" ]; then
    "$python" -m pip install -q --disable-pip-version-check --target "$tools" uv >/dev/null 2>&1 \
      || { echo "install: uv could not be installed; pip installs (slower)" >&2; return 1; }
  fi
  echo "$tools/bin/uv"
}

# pip's configuration for uv: what pip reads (`pip config list`: its files and PIP_* variables, the
# variable winning as in pip), one word per line: options for uv, or NAME=value for its environment.
uv_settings() {
  "$python" -m pip config list 2>/dev/null | "$python" -c '
import shlex, sys
rank = {":env:": 3, "site": 2, "user": 1, "global": 0}
found = {}
for line in sys.stdin:
    name, _, value = line.strip().partition("=")
    scope, _, key = name.rpartition(".")
    if value and rank.get(scope, -1) >= found.get(key, (-1, ""))[0]:
        found[key] = (rank.get(scope, -1), shlex.split(value)[0])
flags = {"index-url": "--index-url", "extra-index-url": "--extra-index-url", "find-links": "--find-links",
         "constraint": "--constraint", "trusted-host": "--allow-insecure-host"}
for key, (_, value) in found.items():
    for item in value.split() if key in flags else []:
        print(flags[key]); print(item)
if "cert" in found: print("SSL_CERT_FILE=" + found["cert"][1])
if "timeout" in found or "default-timeout" in found:
    print("UV_HTTP_TIMEOUT=" + found.get("timeout", found.get("default-timeout"))[1])
'
}

pip_install() {
  "$venv/bin/python" -m pip --version >/dev/null 2>&1 || "$venv/bin/python" -m ensurepip -q >/dev/null
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -e ".[$extras]"
}

# uv pip install of "$@" into the venv, from the index pip is configured with.
uv_install() {
  local uv=$1 settings=() options=() environment=()
  shift
  mapfile -t settings < <(uv_settings)
  for word in "${settings[@]}"; do
    case "$word" in SSL_CERT_FILE=* | UV_HTTP_TIMEOUT=*) environment+=("$word") ;; *) options+=("$word") ;; esac
  done
  env "${environment[@]}" "$uv" pip install -q --python "$venv/bin/python" \
    --index-strategy unsafe-best-match "${options[@]}" "$@"
}

# --packages: a fresh venv of the named packages alone, their bytecode written as they are installed
# (a test's venv of a tool it runs, such as harbor).
if [ "$extras" = --packages ]; then
  rm -rf "$venv"
  if uv=$(find_uv) && "$uv" venv -q --seed --python "$python" "$venv" && uv_install "$uv" --compile-bytecode "$@"; then
    exit 0
  fi
  rm -rf "$venv" && "$python" -m venv "$venv" \
    && "$venv/bin/python" -m pip install -q --disable-pip-version-check "$@"
  exit
fi

# What is already compiled is skipped; a file that does not compile (some packages ship such test
# data) is left to be compiled as it is imported.
compiled() {
  [ "$extras" = dev ] || return 0
  local site
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
  "$venv/bin/python" -m compileall -qq -j 0 "$site" coder_eval || true
}

if uv=$(find_uv); then
  [ -x "$venv/bin/python" ] || "$uv" venv -q --seed --python "$python" "$venv" || "$python" -m venv "$venv"
  uv_install "$uv" -e ".[$extras]" && { compiled; exit; }
  echo "install: uv failed; installing with pip" >&2
else
  [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
fi
pip_install && compiled
