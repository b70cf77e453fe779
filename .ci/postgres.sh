#!/usr/bin/env bash
# Install (if needed) and start a local PostgreSQL server for the PostgreSQL store tests, then
# print a DSN on stdout (and nothing else there; progress goes to stderr).
#
#   export SCORECORE_TEST_POSTGRES_DSN="$(.ci/postgres.sh)"
#
# Idempotent: safe to run again while the server is up. Needs root on Debian/Ubuntu.
set -euo pipefail

DB_USER="${SCORECORE_PG_USER:-scorecore}"
DB_PASS="${SCORECORE_PG_PASSWORD:-scorecore}"
DB_NAME="${SCORECORE_PG_DB:-scorecore_test}"
PORT="${SCORECORE_PG_PORT:-5432}"

log() { echo "postgres.sh: $*" >&2; }

if [ "$(id -u)" -ne 0 ]; then
    log "must run as root (installs packages and starts a system service)"
    exit 2
fi

if ! command -v pg_ctlcluster >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    log "installing postgresql with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    # A registry hiccup should not fail CI: try the install a few times.
    for attempt in 1 2 3; do
        if apt-get update -qq >&2 && apt-get install -y -qq postgresql >&2; then break; fi
        [ "$attempt" = 3 ] && { log "apt-get install postgresql failed 3 times"; exit 1; }
        log "apt-get failed (attempt $attempt); retrying in 5 s"
        sleep 5
    done
fi

VERSION="$(ls /usr/lib/postgresql | sort -V | tail -n 1)"
if ! pg_lsclusters -h | awk '{print $1, $2}' | grep -qx "$VERSION main"; then
    log "creating cluster $VERSION/main on port $PORT"
    pg_createcluster "$VERSION" main --port "$PORT" >&2
fi
PORT="$(pg_lsclusters -h | awk -v v="$VERSION" '$1 == v && $2 == "main" {print $3}')"

if ! pg_lsclusters -h | awk -v v="$VERSION" '$1 == v && $2 == "main" {print $4}' | grep -q online; then
    log "starting cluster $VERSION/main"
    pg_ctlcluster "$VERSION" main start >&2
fi

for _ in $(seq 1 50); do
    if su postgres -c "pg_isready -q -p $PORT"; then break; fi
    sleep 0.2
done
su postgres -c "pg_isready -q -p $PORT" || { log "server did not become ready"; exit 1; }

psql_admin() { su postgres -c "psql -p $PORT -v ON_ERROR_STOP=1 -qtAX $*"; }

if [ "$(psql_admin "-c \"SELECT 1 FROM pg_roles WHERE rolname = '$DB_USER'\"")" != "1" ]; then
    log "creating role $DB_USER"
    psql_admin "-c \"CREATE ROLE $DB_USER LOGIN PASSWORD '$DB_PASS'\"" >&2
fi
if [ "$(psql_admin "-c \"SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'\"")" != "1" ]; then
    log "creating database $DB_NAME"
    psql_admin "-c \"CREATE DATABASE $DB_NAME OWNER $DB_USER\"" >&2
fi

echo "postgresql://$DB_USER:$DB_PASS@127.0.0.1:$PORT/$DB_NAME"
