#!/usr/bin/env bash
# Checks the Dockerfile without a Docker daemon (there is none on the CI
# machine): the final stage installs exactly the Debian packages of the
# shared libraries `ldd` finds for the built binary (beyond debian:12-slim's
# libc6, libgcc-s1 and libstdc++6), every stage is Debian 12 (or the empty
# CUDA placeholder), and the image runs as a non-root user.
# usage: scripts/test-dockerfile.sh BINARY [DOCKERFILE]
set -euo pipefail
binary="${1:?usage: test-dockerfile.sh BINARY [DOCKERFILE]}"
dockerfile="${2:-$(dirname "$0")/../Dockerfile}"
fail() { echo "test-dockerfile: FAIL: $*" >&2; exit 1; }

# The package owning each library the binary loads (merged /usr: try both).
needed=$(ldd "$binary" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
  for path in "$lib" "/usr$lib" "$(readlink -f "$lib")"; do
    if owner=$(dpkg -S "$path" 2>/dev/null); then
      echo "${owner%%:*}"; continue 2
    fi
  done
  echo "test-dockerfile: no Debian package owns $lib" >&2; echo "?$lib"
done | sort -u | grep -vxE 'libc6|libgcc-s1|libstdc\+\+6')
grep -q '^?' <<<"$needed" && fail "libraries outside Debian packages"

# The final stage's apt-get install list.
final=$(awk '/^FROM /{stage=""} {stage=stage $0 "\n"} END{printf "%s", stage}' "$dockerfile")
installed=$(awk '/--no-install-recommends/{on=1; sub(/.*--no-install-recommends/, "")}
                 on && /^ *&&/{on=0}
                 on {gsub(/\\/, ""); print}' <<<"$final" | tr ' ' '\n' |
            grep -v '^$' | sort -u)
[[ -n "$installed" ]] || fail "no apt-get install in the final stage"
if [[ "$needed" != "$installed" ]]; then
  diff <(echo "$needed") <(echo "$installed") | sed 's/^</  needed, not installed:/; s/^>/  installed, not needed:/' >&2 || true
  fail "the final stage's packages differ from what $binary links"
fi
grep -qE -- '-dev\b|build-essential' <<<"$installed" && fail "build packages in the final stage"

# Stages: Debian 12 only; the user: numeric, not root.
while read -r _ image rest; do
  case "$image" in
    debian:12|debian:12-slim|scratch) ;;
    *) fail "stage image $image is not Debian 12" ;;
  esac
done < <(grep -E '^FROM ' "$dockerfile")
(( $(grep -cE '^FROM ' "$dockerfile") >= 3 )) || fail "want a multi-stage build"
user=$(grep -E '^USER ' <<<"$final" | tail -1 | awk '{print $2}')
[[ -n "$user" && "${user%%:*}" != 0 && "${user%%:*}" != root ]] ||
  fail "the image must run as a non-root user (USER: '${user}')"
[[ "$(grep -E '^FROM ' <<<"$final")" == "FROM debian:12-slim" ]] ||
  fail "the final stage must be debian:12-slim"
echo "test-dockerfile: ok ($(wc -l <<<"$installed") runtime packages, user $user)"
