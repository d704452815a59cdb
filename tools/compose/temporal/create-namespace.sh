#!/bin/sh
# The namespace pixflow's workflows run in, and the Keyword search attributes they carry
# (MerchantId, EntityId), so operators filter workflows by merchant in the Temporal UI.
# Idempotent: existing ones are kept.
set -eu
NAMESPACE="${NAMESPACE:-default}"
ADDRESS="${TEMPORAL_ADDRESS:-temporal:7233}"
# The CLI may try the name's IPv6 address first, where the server does not listen: use its IPv4.
HOST="${ADDRESS%:*}"
PORT="${ADDRESS##*:}"
IPV4=$(getent ahostsv4 "$HOST" 2>/dev/null | awk 'NR == 1 { print $1 }')
[ -n "$IPV4" ] && ADDRESS="$IPV4:$PORT"

echo "waiting for Temporal at $ADDRESS"
attempt=0
until temporal operator cluster health --address "$ADDRESS" >/dev/null 2>&1; do
  attempt=$((attempt + 1))
  [ "$attempt" -ge 30 ] && { echo "Temporal did not become healthy"; exit 1; }
  sleep 2
done

temporal operator namespace describe --address "$ADDRESS" -n "$NAMESPACE" >/dev/null 2>&1 ||
  temporal operator namespace create --address "$ADDRESS" -n "$NAMESPACE" --retention 30d

existing=$(temporal operator search-attribute list --address "$ADDRESS" -n "$NAMESPACE" || true)
for name in MerchantId EntityId; do
  if echo "$existing" | grep -qw "$name"; then
    echo "search attribute $name exists"
  else
    temporal operator search-attribute create --address "$ADDRESS" -n "$NAMESPACE" --name "$name" --type Keyword
  fi
done
echo "namespace $NAMESPACE ready"
