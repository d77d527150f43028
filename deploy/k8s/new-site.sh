#!/usr/bin/env bash
# Writes a site overlay for deploy/k8s: the material no repository should
# hold, generated fresh, and a kustomization.yaml that turns it into the
# Secrets and ConfigMaps the base mounts (docs/operations.md "Kubernetes").
#
# usage: deploy/k8s/new-site.sh DIR [--overlay cpu|gpu|cert-manager]
#          [--image REPO/NAME:TAG] [--layerproof BIN] [--audit-rate A]
#          [--san NAME]...
#   DIR          where to write it (created; must not hold a site already;
#                not inside this repository unless git ignores it)
#   --image      the image your nodes pull (pushed to your registry; the
#                gpu overlay's prover gets the same name with -cuda)
#   --overlay    the overlay it builds on (default cpu); with cert-manager
#                the TLS certificates are cert-manager's, not made here
#   --layerproof the binary that makes the Ed25519 signing keys
#                (default: layerproof on PATH)
#   --audit-rate the fraction of requests audited (default: the base's)
#   --san NAME   one more DNS name in every server certificate (tests that
#                run the manifests on loopback add localhost)
# Then: kubectl apply -k DIR. Keep DIR/files private: it holds the signing
# keys, the TLS keys and the API keys.
#
# The TLS material is a private CA of this site (EC P-256, openssl) and one
# certificate per identity: verifier-1, prover-1 (server and client) and
# auditor (client), each common name as base/config/roles.json grants it.
set -euo pipefail

usage() { sed -n '5,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

dir=""; overlay=cpu; bin=layerproof; audit_rate=""; image=""; sans=()
while (($#)); do
  case "$1" in
    --overlay) overlay="${2:?}"; shift 2 ;;
    --layerproof) bin="${2:?}"; shift 2 ;;
    --image) image="${2:?}"; shift 2 ;;
    --audit-rate) audit_rate="${2:?}"; shift 2 ;;
    --san) sans+=("${2:?}"); shift 2 ;;
    -h|--help) usage ;;
    -*) echo "new-site.sh: unknown option $1" >&2; usage ;;
    *) [[ -z "$dir" ]] || usage; dir="$1"; shift ;;
  esac
done
[[ -n "$dir" ]] || usage
case "$overlay" in cpu|gpu|cert-manager) ;; *)
  echo "new-site.sh: --overlay: got \"$overlay\", want cpu, gpu or cert-manager" >&2
  exit 2 ;;
esac
here="$(cd "$(dirname "$0")" && pwd)"
if [[ -e "$dir/kustomization.yaml" ]]; then
  echo "new-site.sh: $dir/kustomization.yaml exists; not overwriting a site" >&2
  exit 1
fi
dir="$(realpath -m "$dir")"
# Private keys must not land in the repository (or a Docker build context).
repo="$(cd "$here/../.." && pwd)"
if [[ "$dir/" == "$repo/"* ]] && ! git -C "$repo" check-ignore -q "$dir" 2>/dev/null; then
  echo "new-site.sh: $dir is inside the repository and not ignored by git;" \
    "write the site elsewhere (it holds private keys)" >&2
  exit 2
fi
mkdir -p "$dir/files"
files="$dir/files"
umask 077

# Ed25519 signing keys: the verifier's (checkpoints, verdicts) and the
# prover's (commitments).
"$bin" keygen --out "$files/verifier" >/dev/null
"$bin" keygen --out "$files/prover-1" >/dev/null

cat > "$files/provers.json" <<JSON
{"provers": [{"id": "prover-1", "public_key_file": "prover-1.pub",
              "opening_address": "layerproof-prover:7004"}]}
JSON
api_key="$(openssl rand -hex 24)"
printf '{"%s": "client-1"}\n' "$api_key" > "$files/api-keys.json"

tls_secrets=""
if [[ "$overlay" != cert-manager ]]; then
  tls="$files/tls"
  mkdir -p "$tls"
  openssl ecparam -name prime256v1 -genkey -noout -out "$tls/ca.key" 2>/dev/null
  openssl req -x509 -new -key "$tls/ca.key" -subj "/CN=layerproof-ca" \
    -days 3650 -sha256 -out "$tls/ca.crt" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  # issue NAME CN SERVICE: a certificate for CN; SERVICE (or "") is the
  # Service others dial, named in its SANs.
  issue() {
    local name="$1" cn="$2" service="$3" san="" eku="clientAuth"
    if [[ -n "$service" ]]; then
      san="DNS:$service,DNS:$service.layerproof.svc"
      san="$san,DNS:$service.layerproof.svc.cluster.local"
      for extra in "${sans[@]}"; do san="$san,DNS:$extra"; done
      eku="serverAuth,clientAuth"
    fi
    openssl ecparam -name prime256v1 -genkey -noout -out "$tls/$name.key.sec1" 2>/dev/null
    openssl pkcs8 -topk8 -nocrypt -in "$tls/$name.key.sec1" -out "$tls/$name.key"
    rm "$tls/$name.key.sec1"
    local ext="$tls/$name.ext"
    {
      echo "basicConstraints=critical,CA:FALSE"
      echo "keyUsage=critical,digitalSignature,keyEncipherment"
      echo "extendedKeyUsage=$eku"
      [[ -z "$san" ]] || echo "subjectAltName=$san"
    } > "$ext"
    openssl req -new -key "$tls/$name.key" -subj "/CN=$cn" \
      -out "$tls/$name.csr" 2>/dev/null
    openssl x509 -req -in "$tls/$name.csr" -CA "$tls/ca.crt" \
      -CAkey "$tls/ca.key" -CAcreateserial -days 825 -sha256 \
      -extfile "$ext" -out "$tls/$name.crt" 2>/dev/null
    rm "$tls/$name.csr" "$ext"
  }
  issue verifier verifier-1 layerproof-verifier
  issue prover-1 prover-1 layerproof-prover
  issue auditor auditor ""
  rm -f "$tls/ca.srl"
  for id in verifier prover-1 auditor; do
    tls_secrets+="- name: layerproof-tls-$id
  type: kubernetes.io/tls
  files:
  - tls.crt=files/tls/$id.crt
  - tls.key=files/tls/$id.key
  - ca.crt=files/tls/ca.crt
"
  done
fi

settings=""
if [[ -n "$audit_rate" ]]; then
  settings="- name: layerproof-settings
  behavior: merge
  literals:
  - audit-rate=$audit_rate
"
fi

images=""
if [[ -n "$image" ]]; then
  name="${image%:*}"; tag="${image##*:}"
  [[ "$name" != "$image" ]] || tag=0.1.0
  images="images:
- name: layerproof
  newName: $name
  newTag: $tag
- name: layerproof-cuda
  newName: $name-cuda
  newTag: $tag
"
fi

base="$(realpath --relative-to="$dir" "$here/overlays/$overlay")"
cat > "$dir/kustomization.yaml" <<YAML
# A LayerProof site on the $overlay overlay, written by new-site.sh.
# kubectl apply -k .   (files/ holds private keys: keep it out of git)
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: layerproof
bases:
- $base
$images
configMapGenerator:
- name: layerproof-provers
  files:
  - files/provers.json
  - files/prover-1.pub
- name: layerproof-verifier-pub
  files:
  - files/verifier.pub
$settings
secretGenerator:
- name: layerproof-verifier-key
  files:
  - verifier.key=files/verifier.key
- name: layerproof-prover-1-key
  files:
  - prover.key=files/prover-1.key
- name: layerproof-api-keys
  files:
  - files/api-keys.json
$tls_secrets
YAML
echo "new-site.sh: wrote $dir (kubectl apply -k $dir); API key for client-1 in $files/api-keys.json"
