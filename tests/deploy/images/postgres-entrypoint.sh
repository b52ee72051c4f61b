#!/bin/sh
# The stand-in postgres image's entrypoint (postgres.Dockerfile): on an empty data directory,
# initdb with POSTGRES_USER as the superuser and POSTGRES_PASSWORD as its password, then
# POSTGRES_DB created; network clients authenticate with scram-sha-256, the local socket is trusted
# (pg_isready, the health check). Then the server, listening on every interface.
set -eu
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" -E UTF8 --auth-local=trust \
    --auth-host=scram-sha-256 --no-instructions >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ "$db" != postgres ]; then
    echo "CREATE DATABASE \"$db\";" | postgres --single -D "$PGDATA" postgres >/dev/null
  fi
  echo "postgres-entrypoint: initialized $PGDATA (user $user, database $db)"
fi
[ "${1:-}" = postgres ] && shift && exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
exec "$@"
