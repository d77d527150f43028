#!/usr/bin/env bash
# Clang's thread-safety analysis (-Wthread-safety, as errors) over every C++
# translation unit of a build: the ABSL_GUARDED_BY / ABSL_EXCLUSIVE_LOCKS_
# REQUIRED annotations are no-ops under GCC, which builds everything else,
# so only this pass makes them checked. It replays the build's
# compile_commands.json with clang++-14 -fsyntax-only (the analysis runs in
# the front end; code generation would add nothing to it), in parallel.
# Generated sources (protobuf, gRPC) and CUDA files are skipped.
# Usage: scripts/check-thread-safety.sh [BUILD_DIR]   (default build; run
# scripts/build.sh first). Exit 0 clean, 1 with findings.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
command -v clang++-14 >/dev/null || {
  echo "check-thread-safety: clang++-14 missing (scripts/setup.sh)" >&2; exit 2; }
[[ -f "$build/compile_commands.json" ]] || {
  echo "check-thread-safety: no $build/compile_commands.json (scripts/build.sh)" >&2
  exit 2; }
python3 - "$build" "$(nproc)" <<'PY'
import concurrent.futures, json, os, shlex, subprocess, sys, time
build, jobs = os.path.abspath(sys.argv[1]), int(sys.argv[2])
entries = json.load(open(os.path.join(build, "compile_commands.json")))
units = []
for e in entries:
    src = os.path.abspath(os.path.join(e["directory"], e["file"]))
    if not src.endswith((".cc", ".cpp")) or src.startswith(build + os.sep):
        continue
    argv = shlex.split(e["command"]) if "command" in e else e["arguments"]
    out, skip = ["clang++-14"], 0
    for i, a in enumerate(argv[1:], 1):
        if skip:
            skip -= 1
            continue
        if a in ("-o", "-MT", "-MF"):
            skip = 1
            continue
        if a in ("-c", "-MD"):
            continue
        out.append(a)
    out += ["-fsyntax-only", "-Wthread-safety", "-Werror=thread-safety",
            "-Wno-unknown-warning-option"]
    units.append((src, e["directory"], out))
units = sorted({u[0]: u for u in units}.values())
start = time.time()
def run(unit):
    src, cwd, argv = unit
    p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    return src, p.returncode, p.stderr
failed = []
with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
    for src, rc, err in pool.map(run, units):
        findings = [l for l in err.splitlines() if "-Wthread-safety" in l]
        if rc != 0:
            failed.append(src)
            sys.stderr.write(err)
        elif findings:
            sys.stderr.write(err)
print(f"check-thread-safety: {len(units)} translation units, "
      f"{len(failed)} failed, {time.time() - start:.0f} s")
sys.exit(1 if failed else 0)
PY
