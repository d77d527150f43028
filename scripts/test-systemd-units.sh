#!/usr/bin/env bash
# `systemd-analyze verify` on deploy/systemd/*, with ExecStart pointed at the
# `layerproof` binary of BUILD_DIR (default build), since the units name
# where it is installed (/usr/local/bin). The auditor template is checked as
# an instance. Exits non-zero on any complaint.
#   scripts/test-systemd-units.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
binary="$build/cli/layerproof"
[[ -x "$binary" ]] || { echo "test-systemd-units: no $binary" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for unit in "$root"/deploy/systemd/*.service; do
  sed "s|/usr/local/bin/layerproof|$binary|" "$unit" > "$tmp/$(basename "$unit")"
done
cp "$tmp/layerproof-auditor@.service" "$tmp/layerproof-auditor@a.service"
out=$(cd "$tmp" && systemd-analyze verify \
  ./layerproof-verifier.service ./layerproof-prover.service \
  ./layerproof-auditor@a.service 2>&1) || { echo "$out" >&2; exit 1; }
# Warnings are failures too (verify exits 0 on some of them).
if [[ -n "$out" ]]; then echo "$out" >&2; exit 1; fi
echo "test-systemd-units: 3 units verified"
