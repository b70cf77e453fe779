#!/usr/bin/env bash
# Make the virtualenvs of the instrumentation conformance matrix, one per library set, from the
# pinned lock files .ci/instrumentations/NAME.txt; print the folder holding them on stdout (and
# nothing else there; progress goes to stderr).
#
#   export SCORECORE_INSTRUMENTATIONS_HOME="$(bash .ci/instrumentations.sh)"
#   export SCORECORE_TEST_INSTRUMENTATIONS=1   # tests/traces/test_instrumentation_recording.py
#
# The libraries (and the SDK versions some of them need) never enter the project's environment.
# A virtualenv is kept between runs on the same machine and made again only when its lock file
# changed. `bash .ci/instrumentations.sh --relock` resolves each NAME.in again (the top-level
# pins) and rewrites NAME.txt from what pip installed.
set -euo pipefail
cd "$(dirname "$0")/.."

HOME_DIR="${SCORECORE_INSTRUMENTATIONS_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/scorecore-instrumentations}"
PYTHON="${SCORECORE_INSTRUMENTATIONS_PYTHON:-python3}"
RELOCK=false
[ "${1:-}" = "--relock" ] && RELOCK=true

log() { echo "instrumentations.sh: $*" >&2; }

pip_install() {  # VENV ARGS...: pip install, tried 3 times (a registry hiccup should not fail CI)
    local venv="$1"; shift
    for attempt in 1 2 3; do
        if "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@" >&2; then
            return 0
        fi
        [ "$attempt" = 3 ] && { log "pip install $* failed 3 times"; return 1; }
        log "pip failed (attempt $attempt); retrying in 5 s"
        sleep 5
    done
}

mkdir -p "$HOME_DIR"
for spec in .ci/instrumentations/*.in; do
    name="$(basename "$spec" .in)"
    lock=".ci/instrumentations/$name.txt"
    venv="$HOME_DIR/$name"
    if [ "$RELOCK" = false ] && [ -f "$venv/.lock" ] && cmp -s "$lock" "$venv/.lock"; then
        log "$name: up to date"
        continue
    fi
    log "$name: making $venv"
    rm -rf "$venv"
    "$PYTHON" -m venv "$venv"
    if [ "$RELOCK" = true ]; then
        pip_install "$venv" -r "$spec"
        {
            echo "# pip freeze of a virtualenv made from $name.in; bash .ci/instrumentations.sh --relock makes it again."
            "$venv/bin/python" -m pip freeze --disable-pip-version-check
        } >"$lock"
    else
        # The lock file lists every package: nothing is resolved again.
        pip_install "$venv" --no-deps -r "$lock"
    fi
    # A lock file that misses a dependency fails here, not in the middle of a recording.
    "$venv/bin/python" -m pip check --disable-pip-version-check >&2
    cp "$lock" "$venv/.lock"
done
echo "$HOME_DIR"
