#!/usr/bin/env bash
# The docker daemon the docker driver's tests need. Nothing starts one on a bare machine (no systemd),
# so `start` runs dockerd in the background when none answers and we may (root, docker.io installed),
# and `stop` stops only a daemon this script started. Exit codes: 0 running, 1 cannot run one.
#   bash scripts/dockerd.sh start   # "dockerd: started (pid N), log in /tmp/coder_eval-dockerd/dockerd.log"
#   bash scripts/dockerd.sh stop
set -u
state=${CODER_EVAL_DOCKERD_DIR:-/tmp/coder_eval-dockerd}
answers() { docker info >/dev/null 2>&1; }

start() {
  if answers; then echo "dockerd: already running"; return 0; fi
  if ! command -v dockerd >/dev/null 2>&1; then
    echo "dockerd: not installed; install it with: sudo apt-get install -y docker.io" >&2; return 1
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "dockerd: not running, and only root can start it: sudo bash scripts/dockerd.sh start" >&2; return 1
  fi
  mkdir -p "$state"
  nohup dockerd --log-level=warn > "$state/dockerd.log" 2>&1 < /dev/null &
  echo $! > "$state/pid"
  for _ in $(seq 150); do
    if answers; then echo "dockerd: started (pid $(cat "$state/pid")), log in $state/dockerd.log"; return 0; fi
    kill -0 "$(cat "$state/pid")" 2>/dev/null || break
    sleep 0.2
  done
  echo "dockerd: did not start; the end of $state/dockerd.log:" >&2
  tail -5 "$state/dockerd.log" >&2
  stop
  return 1
}

stop() {
  [ -f "$state/pid" ] || return 0
  pid=$(cat "$state/pid")
  rm -f "$state/pid"
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || { echo "dockerd: stopped"; return 0; }; sleep 0.2; done
  kill -KILL "$pid" 2>/dev/null
  echo "dockerd: killed after 20 s" >&2
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
