#!/bin/sh
# pixflow's two database roles (docs/production.md "Database roles"), run once by the postgres
# image on a fresh volume (/docker-entrypoint-initdb.d) as its superuser: `pixflow_owner` owns the
# database and runs the migrations; `pixflow_app`, the service's, owns nothing and gets its
# privileges from the migrations. Passwords come from the compose secrets that
# tools/compose/make-secrets.sh writes. Re-running it re-keys the roles and changes nothing else.
#   (an existing volume) docker compose exec postgres sh /docker-entrypoint-initdb.d/10-pixflow-roles.sh
set -eu
secrets="${PIXFLOW_DB_SECRETS_DIR:-/run/secrets}"
owner_pw=$(cat "$secrets/db_owner_password")
app_pw=$(cat "$secrets/db_app_password")
db="${POSTGRES_DB:-pixflow}"
psql -v ON_ERROR_STOP=1 --no-psqlrc --quiet --username "${POSTGRES_USER:-postgres}" --dbname "$db" \
  -v owner_pw="$owner_pw" -v app_pw="$app_pw" -v db="$db" <<'SQL'
select 'create role pixflow_owner' where not exists (select from pg_roles where rolname = 'pixflow_owner') \gexec
select 'create role pixflow_app' where not exists (select from pg_roles where rolname = 'pixflow_app') \gexec
alter role pixflow_owner login nosuperuser nocreatedb nocreaterole noreplication nobypassrls password :'owner_pw';
alter role pixflow_app login nosuperuser nocreatedb nocreaterole noreplication nobypassrls password :'app_pw';
alter database :"db" owner to pixflow_owner;
revoke temporary, create on database :"db" from public;
grant connect on database :"db" to pixflow_app;
SQL
echo "pixflow roles ready in database $db"
