#!/usr/bin/env bash
# Run the type check and the whole test suite on another supported Python than the main
# virtualenv's (the package claims every Python from requires-python up; CI checks the oldest
# with `make test` and the others with this script).
#
#   bash .ci/other-python.sh 3.13                  # mypy + the whole pytest suite
#   bash .ci/other-python.sh 3.13 tests/evals -x   # mypy + pytest with these arguments
#
# The interpreter comes from pyenv (`$(pyenv root)/versions/3.13.*`) or from PATH
# (`python3.13`); nothing is downloaded but packages from PyPI. The virtualenv is `.venv-3.13`
# (kept between runs on the same machine, like `.venv`); the project is installed into it with
# the `dev` and `local` extras through pip's cache, so the llama-cpp-python wheel built once for
# the main virtualenv (py3-none: it loads llama.cpp's own shared library) is reused, not
# compiled again. Run it after .ci/run has exported the services' variables
# (SCORECORE_TEST_POSTGRES_DSN, SCORECORE_TEST_PHOENIX_URL) and CI=true, so that the same tests
# run (or fail, rather than skip) as on the main Python.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ] || ! [[ "$1" =~ ^3\.[0-9]+$ ]]; then
    echo "usage: bash .ci/other-python.sh 3.N [pytest arguments...]" >&2
    exit 2
fi
VERSION="$1"
shift
VENV=".venv-$VERSION"

log() { echo "other-python.sh: $*" >&2; }

# A pyenv shim named python3.N exists even when that version is not the selected one (it then
# fails), so pyenv's own install is looked up first, then anything on PATH that runs.
find_python() {
    local root candidate
    if command -v pyenv >/dev/null 2>&1; then
        root="$(pyenv root)"
        candidate="$(ls -d "$root/versions/$VERSION".* 2>/dev/null | sort -V | tail -n 1 || true)"
        if [ -n "$candidate" ] && [ -x "$candidate/bin/python$VERSION" ]; then
            echo "$candidate/bin/python$VERSION"
            return 0
        fi
    fi
    if command -v "python$VERSION" >/dev/null 2>&1 && "python$VERSION" -c "" >/dev/null 2>&1; then
        command -v "python$VERSION"
        return 0
    fi
    return 1
}

if [ ! -x "$VENV/bin/python" ]; then
    if ! PYTHON="$(find_python)"; then
        log "no Python $VERSION found (pyenv versions or python$VERSION on PATH)"
        exit 1
    fi
    log "creating $VENV with $PYTHON"
    "$PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
fi
found="$("$VENV/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
if [ "$found" != "$VERSION" ]; then
    log "$VENV holds Python $found, not $VERSION: remove it and run again"
    exit 1
fi

START=$SECONDS
# pip builds llama-cpp-python (the local extra) from source, and caches the built wheel per
# interpreter version: the one built for the main virtualenv is not offered to this one, which
# would compile llama.cpp again (11-20 minutes on 2 cores). That wheel is py3-none (it loads
# llama.cpp through ctypes), so the main virtualenv's pip hands it over from its cache.
MAIN_VENV="${SCORECORE_MAIN_VENV:-.venv}"
if [ -x "$MAIN_VENV/bin/python" ] && ! "$VENV/bin/python" -c "import llama_cpp" 2>/dev/null; then
    LLAMA="$("$VENV/bin/python" -c '
import tomllib
with open("pyproject.toml", "rb") as file:
    local = tomllib.load(file)["project"]["optional-dependencies"]["local"]
print(next(r for r in local if r.startswith("llama-cpp-python")))')"
    WHEELS="$(mktemp -d)"
    if "$MAIN_VENV/bin/python" -m pip wheel --quiet --no-deps -w "$WHEELS" "$LLAMA"; then
        "$VENV/bin/python" -m pip install --quiet "$WHEELS"/llama_cpp_python-*.whl
    else
        log "no llama-cpp-python wheel from $MAIN_VENV: pip builds it for Python $VERSION"
    fi
    rm -rf "$WHEELS"
fi
log "installing the project with the dev and local extras into $VENV"
"$VENV/bin/python" -m pip install --quiet -e ".[dev,local]"
log "installed in $((SECONDS - START)) s"

# The checks run against this Python's standard library and typeshed's view of it; the
# project's mypy.ini names the oldest supported version for the main run.
START=$SECONDS
"$VENV/bin/mypy" --python-version "$VERSION"
log "mypy --python-version $VERSION: $((SECONDS - START)) s"

START=$SECONDS
status=0
"$VENV/bin/python" -m pytest -q "$@" || status=$?
log "pytest on Python $VERSION: $((SECONDS - START)) s (exit $status)"
exit "$status"
