#!/usr/bin/env bash
# Builds the docker driver's default image (coder-eval/base:N) once per machine, offline, from Debian
# packages: this machine's own by default (seconds), or `--from debian` for a clean bookworm made by
# mmdebstrap (a minute; downloads from the Debian mirror). `--force` rebuilds. Needs a running docker
# daemon (bash scripts/dockerd.sh start). Exits 1 with the reason when it cannot.
set -u
cd "$(dirname "$0")/.."
python=.venv/bin/python
[ -x "$python" ] || python=python3
exec "$python" -c "import sys; from coder_eval.sandbox.base_image import main; sys.exit(main(sys.argv[1:]))" "$@"
