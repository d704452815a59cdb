#!/bin/sh
# Temporal's persistence schema in its own PostgreSQL: the `temporal` and `temporal_visibility`
# databases, created and brought to the schema version shipped with the admin-tools image.
# Idempotent: `create` fails harmlessly when a database exists, and update-schema only applies
# what is missing, so the one-shot service can run on every `docker compose up`.
set -eu
: "${POSTGRES_SEEDS:=temporal-postgresql}"
: "${DB_PORT:=5432}"
: "${POSTGRES_USER:=temporal}"
export SQL_PASSWORD="${POSTGRES_PWD:-temporal}"

echo "waiting for PostgreSQL at ${POSTGRES_SEEDS}:${DB_PORT}"
nc -z -w 10 "$POSTGRES_SEEDS" "$DB_PORT"

sql() {
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" "$@"
}
SCHEMA=/etc/temporal/schema/postgresql/v12
for db in temporal temporal_visibility; do
  sql --db "$db" create || echo "database $db exists"
done
sql --db temporal setup-schema -v 0.0 || true
sql --db temporal update-schema -d "$SCHEMA/temporal/versioned"
sql --db temporal_visibility setup-schema -v 0.0 || true
sql --db temporal_visibility update-schema -d "$SCHEMA/visibility/versioned"
echo "Temporal schema ready"
