#!/bin/sh
# The compose secrets (docker-compose.yml, docs/production.md "Secrets"): the first operator's
# e-mail, a generated password for it, and the /metrics token, one file each in
# ${PIXFLOW_SECRETS_DIR:-./secrets}. Existing files are kept. Prints the password once.
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
# Compose bind-mounts each file: the image's `node` user (uid 1000) must read it; the folder stays private.
chmod 644 "$dir"/admin_email "$dir"/admin_password "$dir"/metrics_token
echo "secrets in $dir"
