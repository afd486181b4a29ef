#!/usr/bin/env bash
# Debian's PostgreSQL server for the catalog's server-database tests (tests/test_store_postgres.py).
# Only the binaries are needed: each test session runs its own throw-away server as the `postgres` user in a
# temporary data directory (the server refuses to run as root), on a Unix socket, and removes it afterwards.
# Skipped when initdb is already installed.
set -euo pipefail
if compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "30-postgres: PostgreSQL is missing and this is not root; install Debian's postgresql" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# postgresql-common's post-install would start a cluster of its own; the tests never use it, so it is stopped.
apt-get install -y -qq --no-install-recommends postgresql >/dev/null
service postgresql stop >/dev/null 2>&1 || true
ls /usr/lib/postgresql/*/bin/initdb
