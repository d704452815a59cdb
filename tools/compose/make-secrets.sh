#!/bin/sh
# The compose secrets (docker-compose.yml, docs/production.md "Secrets"): the first operator's
# e-mail, a generated password for it, the /metrics token, and the database's passwords (its
# superuser, the owner role that migrates, the service's role) with the two URLs built from them,
# one file each in ${PIXFLOW_SECRETS_DIR:-./secrets}. Existing files are kept, so running it again
# after an upgrade adds only what is new. Prints the operator's password once.
#   sh tools/compose/make-secrets.sh ops@example.com
set -eu
email="${1:?usage: make-secrets.sh <operator e-mail>}"
dir="${PIXFLOW_SECRETS_DIR:-./secrets}"
mkdir -p "$dir"
chmod 700 "$dir"
umask 077
random() { od -An -N24 -tx1 /dev/urandom | tr -d ' \n'; }
[ -s "$dir/admin_email" ] || printf '%s' "$email" >"$dir/admin_email"
if [ ! -s "$dir/admin_password" ]; then
  random >"$dir/admin_password"
  echo "operator $(cat "$dir/admin_email"), password: $(cat "$dir/admin_password")"
fi
[ -s "$dir/metrics_token" ] || random >"$dir/metrics_token"
# Database roles (docs/production.md "Database roles"); hex passwords need no escaping in a URL.
for name in db_superuser_password db_owner_password db_app_password; do
  [ -s "$dir/$name" ] || random >"$dir/$name"
done
[ -s "$dir/database_url" ] ||
  printf 'postgres://pixflow_app:%s@postgres:5432/pixflow' "$(cat "$dir/db_app_password")" >"$dir/database_url"
[ -s "$dir/database_migration_url" ] ||
  printf 'postgres://pixflow_owner:%s@postgres:5432/pixflow' "$(cat "$dir/db_owner_password")" >"$dir/database_migration_url"
# Compose bind-mounts each file: the image's `node` user (uid 1000) and the postgres image's
# `postgres` user (uid 999) must read them; the folder stays private.
chmod 644 "$dir"/admin_email "$dir"/admin_password "$dir"/metrics_token "$dir"/db_superuser_password \
  "$dir"/db_owner_password "$dir"/db_app_password "$dir"/database_url "$dir"/database_migration_url
echo "secrets in $dir"
