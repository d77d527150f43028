#!/usr/bin/env bash
# Makes throwaway TLS material for tests and the demo, with the openssl CLI
# only (EC P-256 keys, PKCS#8 PEM):
#   ca.pem / ca.key           the test CA (CN=layerproof-test-ca)
#   server.pem / server.key   CN=localhost, SAN DNS:localhost, IP:127.0.0.1
#   NAME.pem / NAME.key       a client certificate with CN=NAME, for each
#                             NAME given (default: prover-1 prover-2
#                             verifier-1 auditor-1 client-1 stranger)
#   rogue-ca.pem / rogue-ca.key, rogue.pem / rogue.key
#                             CN=rogue, signed by a different self-signed CA
#                             (for tests that must refuse it)
# Every run regenerates everything into OUT_DIR. Never use these anywhere
# but a test.
#
# Usage: scripts/make-test-certs.sh OUT_DIR [NAME...]
set -euo pipefail

if [[ $# -lt 1 || -z "$1" ]]; then
  echo "usage: $0 OUT_DIR [NAME...]" >&2
  exit 2
fi
out=$1
shift
names=("$@")
if [[ ${#names[@]} -eq 0 ]]; then
  names=(prover-1 prover-2 verifier-1 auditor-1 client-1 stranger)
fi
for n in "${names[@]}"; do
  if [[ ! $n =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]]; then
    echo "$0: bad name '$n': want letters, digits, '.', '_' or '-'" >&2
    exit 2
  fi
  case $n in
    ca | server | rogue | rogue-ca)
      echo "$0: name '$n' is reserved" >&2
      exit 2
      ;;
  esac
done
command -v openssl >/dev/null || { echo "$0: openssl not found" >&2; exit 1; }
mkdir -p "$out" || { echo "$0: cannot create $out" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log=$tmp/openssl.log
fail() {
  echo "$0: $1 failed:" >&2
  cat "$log" >&2
  exit 1
}
serial=$((RANDOM * 65536 + RANDOM))

# new_ca NAME CN: a self-signed CA certificate and key.
new_ca() {
  openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$tmp/$1.key" -out "$tmp/$1.pem" -days 3650 -subj "/CN=$2" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -addext "subjectKeyIdentifier=hash" >"$log" 2>&1 || fail "CA $1"
}

# new_leaf CA NAME CN EXTENSIONS: a key and a certificate signed by CA.
new_leaf() {
  local ca=$1 name=$2 cn=$3 ext=$4
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$tmp/$name.key" -out "$tmp/$name.csr" -subj "/CN=$cn" \
    >"$log" 2>&1 || fail "request for $name"
  printf '%s\n' "$ext" >"$tmp/$name.ext"
  serial=$((serial + 1))
  openssl x509 -req -in "$tmp/$name.csr" -CA "$tmp/$ca.pem" \
    -CAkey "$tmp/$ca.key" -set_serial "$serial" -days 3650 -sha256 \
    -extfile "$tmp/$name.ext" -out "$tmp/$name.pem" >"$log" 2>&1 ||
    fail "certificate for $name"
}

leaf_ext='basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyAgreement
authorityKeyIdentifier=keyid'
client_ext="$leaf_ext
extendedKeyUsage=clientAuth"
server_ext="$leaf_ext
extendedKeyUsage=serverAuth
subjectAltName=DNS:localhost,IP:127.0.0.1"

new_ca ca layerproof-test-ca
new_ca rogue-ca layerproof-rogue-ca
new_leaf ca server localhost "$server_ext"
for n in "${names[@]}"; do
  new_leaf ca "$n" "$n" "$client_ext"
done
new_leaf rogue-ca rogue rogue "$client_ext"

for n in ca rogue-ca server rogue "${names[@]}"; do
  chmod 600 "$tmp/$n.key"
  mv -f "$tmp/$n.pem" "$tmp/$n.key" "$out/" ||
    { echo "$0: cannot write into $out" >&2; exit 1; }
done
