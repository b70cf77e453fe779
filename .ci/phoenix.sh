#!/usr/bin/env bash
# Install (if needed) and start Arize Phoenix, a real OTLP receiver, on loopback for the
# OpenTelemetry end-to-end test (tests/adapters/otel/test_phoenix.py); print its URL on stdout
# (and nothing else there; progress goes to stderr). Its pid goes to $PHOENIX_PID_FILE.
#
#   export SCORECORE_TEST_PHOENIX_URL="$(bash .ci/phoenix.sh)"
#
# Phoenix (from PyPI, ~850 MB with its dependencies) gets its own virtualenv, kept between runs
# on the same machine: it must not pull its pins into the project's environment.
set -euo pipefail

VERSION="${SCORECORE_PHOENIX_VERSION:-20.26.1}"
VENV="${SCORECORE_PHOENIX_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/scorecore-phoenix-$VERSION}"
PORT="${SCORECORE_PHOENIX_PORT:-16006}"
GRPC_PORT="${SCORECORE_PHOENIX_GRPC_PORT:-14317}"
WORKDIR="$(mktemp -d)"
PID_FILE="${PHOENIX_PID_FILE:-$WORKDIR/phoenix.pid}"
URL="http://127.0.0.1:$PORT"

log() { echo "phoenix.sh: $*" >&2; }
up() { python3 -c "import urllib.request as u; u.urlopen('$URL/healthz', timeout=2)" 2>/dev/null; }

if up; then
    log "a server already answers on $URL"
    echo "$URL"
    exit 0
fi

if [ ! -x "$VENV/bin/phoenix" ]; then
    log "installing arize-phoenix==$VERSION into $VENV (a few minutes the first time)"
    python3 -m venv "$VENV"
    for attempt in 1 2 3; do
        if "$VENV/bin/python" -m pip install --quiet "arize-phoenix==$VERSION" >&2; then break; fi
        [ "$attempt" = 3 ] && { log "pip install arize-phoenix failed 3 times"; exit 1; }
        log "pip failed (attempt $attempt); retrying in 5 s"
        sleep 5
    done
fi

log "starting Phoenix on $URL (data in $WORKDIR)"
PHOENIX_WORKING_DIR="$WORKDIR" PHOENIX_HOST=127.0.0.1 PHOENIX_PORT="$PORT" \
    PHOENIX_GRPC_PORT="$GRPC_PORT" PHOENIX_TELEMETRY_ENABLED=false \
    nohup "$VENV/bin/phoenix" serve >"$WORKDIR/phoenix.log" 2>&1 </dev/null &
echo $! >"$PID_FILE"

for _ in $(seq 1 600); do
    if up; then
        log "Phoenix is up"
        echo "$URL"
        exit 0
    fi
    if ! kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
        log "Phoenix exited; its log:"
        tail -n 30 "$WORKDIR/phoenix.log" >&2
        exit 1
    fi
    sleep 0.5
done
log "Phoenix did not answer within 300 s; its log:"
tail -n 30 "$WORKDIR/phoenix.log" >&2
exit 1
