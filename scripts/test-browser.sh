#!/usr/bin/env bash
# The HTML compliance report in a real browser: renders a report page in
# headless Chromium and checks the rendered DOM (the title, the three SVG
# charts, no script) and the screenshot (a valid PNG that is not blank and
# shows the charts' fills).
#
# The page comes from `layerproof demo --out DIR` (DIR/report.html,
# used even when the demo's own checks fail, with a warning); when the demo
# is not built or writes no page, from the report_html_test sample
# (LP_REPORT_HTML_OUT), with a warning, unless the demo's log shows that
# RenderReportHtml refused its report (a failure). Builds what it needs first.
#
# Exit 0 when every check passes, and also (printing "SKIP: chromium not
# installed") when no chromium binary exists: `scripts/setup.sh
# --with-browser` installs it. Non-zero on any failed check.
# The page, the DOM and the PNG are kept in build/test-browser/.
# Environment: LP_BROWSER_PAGE=sample (skip the demo, render the sample),
# LP_BUILD_JOBS (build parallelism, default nproc),
# LP_BUILD_LOCK (a lock file the build holds, default /tmp/lp-build.lock).
set -euo pipefail
cd "$(dirname "$0")/.."

browser=""
for b in chromium chromium-browser; do
  if command -v "$b" >/dev/null 2>&1; then browser=$(command -v "$b"); break; fi
done
if [[ -z "$browser" ]]; then
  echo "SKIP: chromium not installed (scripts/setup.sh --with-browser installs it)"
  exit 0
fi

fail() { echo "FAIL: $*" >&2; exit 1; }

# 1. Build what is needed: the CLI (for the demo) and the unit test (the
#    fallback page). A CLI that does not build only loses the demo.
if [[ ! -f build/build.ninja && ! -f build/Makefile ]]; then
  bash scripts/build.sh
fi
build() {
  local cmd=(cmake --build build --parallel "${LP_BUILD_JOBS:-$(nproc)}" --target "$@")
  if command -v flock >/dev/null 2>&1; then
    flock "${LP_BUILD_LOCK:-/tmp/lp-build.lock}" "${cmd[@]}"
  else
    "${cmd[@]}"
  fi
}
build report_html_test >/dev/null || fail "cannot build report_html_test"
cli_built=0
if [[ "${LP_BROWSER_PAGE:-demo}" != sample ]]; then
  build layerproof >/dev/null 2>&1 && cli_built=1
fi

out=build/test-browser
rm -rf "$out"
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
html="$out/report.html"

# 2. The page: from the demo when it works, else the unit test's sample.
source=""
if [[ "${LP_BROWSER_PAGE:-demo}" == sample ]]; then
  echo "page: LP_BROWSER_PAGE=sample, not running the demo"
elif ((cli_built)) && [[ -x build/cli/layerproof ]]; then
  demo_rc=0
  timeout 900 build/cli/layerproof demo --out "$tmp/demo" \
    >"$out/demo.log" 2>&1 || demo_rc=$?
  if [[ -s "$tmp/demo/report.html" ]]; then
    # A real report, even when the demo's own checks failed (e.g. its
    # audits happened to miss the tampering prover): render it.
    cp "$tmp/demo/report.html" "$html"
    source="layerproof demo (default load)"
    ((demo_rc == 0)) || echo "WARNING: layerproof demo exited $demo_rc" \
      "($out/demo.log) but wrote its report; rendering that"
  elif grep -q 'compliance report: ' "$out/demo.log"; then
    grep 'compliance report: ' "$out/demo.log" | head -n 3 | sed 's/^/  /'
    fail "RenderReportHtml refused the demo's report ($out/demo.log)"
  else
    echo "WARNING: layerproof demo exited $demo_rc without a report ($out/demo.log):"
    tail -n 3 "$out/demo.log" | sed 's/^/  /'
  fi
else
  echo "WARNING: build/cli/layerproof did not build"
fi
if [[ -z "$source" ]]; then
  [[ "${LP_BROWSER_PAGE:-demo}" == sample ]] ||
    echo "WARNING: falling back to the report_html_test sample report"
  LP_REPORT_HTML_OUT="$PWD/$html" build/tests/verifier/report_html_test \
    --gtest_filter=ReportHtmlTest.SampleReportWritesToOutPath >"$out/sample.log" 2>&1 ||
    { cat "$out/sample.log"; fail "report_html_test could not write the sample page"; }
  source="report_html_test sample"
fi
[[ -s "$html" ]] || fail "no page at $html"
echo "page: $html from $source ($(wc -c <"$html") bytes)"

# The page itself must need nothing from outside.
if grep -Eiq '(src|href)[[:space:]]*=[[:space:]]*["'"'"']?[[:space:]]*(https?:)?//' "$html"; then
  fail "the page references an external resource"
fi
if grep -Eiq '<script' "$html"; then fail "the page contains a <script>"; fi

# 3. Headless Chromium: the rendered DOM and a screenshot.
url="file://$PWD/$html"
flags=(--headless --no-sandbox --disable-gpu --no-first-run
       --disable-dev-shm-usage --hide-scrollbars
       --user-data-dir="$tmp/profile")
echo "browser: $("$browser" --version 2>/dev/null | head -n 1)"
timeout 180 "$browser" "${flags[@]}" --dump-dom "$url" >"$out/dom.html" \
  2>"$out/chromium-dom.log" || { tail -n 20 "$out/chromium-dom.log"; fail "chromium --dump-dom failed"; }
timeout 180 "$browser" "${flags[@]}" --screenshot="$PWD/$out/report.png" \
  --window-size=1280,2400 "$url" >"$out/chromium-shot.log" 2>&1 ||
  { tail -n 20 "$out/chromium-shot.log"; fail "chromium --screenshot failed"; }

dom="$out/dom.html"
grep -q '<title>LayerProof compliance report</title>' "$dom" ||
  fail "rendered DOM: no <title>LayerProof compliance report</title>"
grep -q '<h1>LayerProof compliance report</h1>' "$dom" ||
  fail "rendered DOM: no <h1>LayerProof compliance report</h1>"
for id in chart-timeline chart-verdicts chart-detection; do
  grep -Eq "<svg[^>]* id=\"$id\"" "$dom" || fail "rendered DOM: no <svg id=\"$id\">"
done
svgs=$(grep -o '<svg' "$dom" | wc -l)
((svgs >= 3)) || fail "rendered DOM: $svgs <svg> elements, want >= 3"
if grep -Eiq '<script' "$dom"; then fail "rendered DOM contains a <script>"; fi
echo "dom: title, h1 and $svgs <svg> charts (chart-timeline, chart-verdicts, chart-detection) present"

# 4. The screenshot: a valid PNG (signature, CRCs, zlib stream, filters),
#    1280x2400, with many colours, not mostly blank, and the charts' PASS
#    fill (#c6e7c6) painted.
python3 - "$out/report.png" <<'PY'
import struct, sys, zlib

path = sys.argv[1]
data = open(path, "rb").read()
def die(msg):
    print(f"FAIL: {path}: {msg}", file=sys.stderr)
    sys.exit(1)
if data[:8] != b"\x89PNG\r\n\x1a\n":
    die("not a PNG")
pos, chunks = 8, []
while pos < len(data):
    if pos + 8 > len(data):
        die("truncated chunk header")
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    crc = data[pos + 8 + length:pos + 12 + length]
    if len(body) != length or len(crc) != 4:
        die(f"truncated {kind!r} chunk")
    if zlib.crc32(kind + body) != struct.unpack(">I", crc)[0]:
        die(f"bad CRC in {kind!r} chunk")
    chunks.append((kind, body))
    pos += 12 + length
    if kind == b"IEND":
        break
if not chunks or chunks[0][0] != b"IHDR" or chunks[-1][0] != b"IEND":
    die("missing IHDR or IEND")
w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
if (w, h) != (1280, 2400):
    die(f"size {w}x{h}, want 1280x2400")
if depth != 8 or ctype not in (2, 6) or interlace != 0:
    die(f"unexpected format depth={depth} colour type={ctype} interlace={interlace}")
bpp = 3 if ctype == 2 else 4
raw = zlib.decompress(b"".join(b for k, b in chunks if k == b"IDAT"))
stride = w * bpp
if len(raw) != h * (stride + 1):
    die(f"{len(raw)} bytes of image data, want {h * (stride + 1)}")
prev = bytearray(stride)
colours, non_white, pass_fill = set(), 0, 0
for y in range(h):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    if f == 1:
        for i in range(bpp, stride):
            line[i] = (line[i] + line[i - bpp]) & 0xFF
    elif f == 2:
        line = bytearray((a + b) & 0xFF for a, b in zip(line, prev))
    elif f == 3:
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
    elif f == 4:
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            line[i] = (line[i] + pred) & 0xFF
    elif f != 0:
        die(f"row {y}: filter type {f}")
    for x in range(0, stride, bpp):
        px = bytes(line[x:x + 3])
        colours.add(px)
        if px != b"\xff\xff\xff":
            non_white += 1
            r, g, bl = px
            if abs(r - 0xC6) <= 3 and abs(g - 0xE7) <= 3 and abs(bl - 0xC6) <= 3:
                pass_fill += 1
    prev = line
share = non_white / (w * h)
print(f"png: {w}x{h}, {len(colours)} distinct colours, "
      f"{100 * share:.1f} % non-white pixels, {pass_fill} pixels of the PASS fill")
if len(colours) < 64:
    die(f"only {len(colours)} distinct colours: blank or unstyled")
if share < 0.02:
    die(f"only {100 * share:.2f} % non-white pixels: blank")
if pass_fill < 100:
    die("the charts' PASS fill (#c6e7c6) is not painted")
PY

echo "PASS: the report renders in $("$browser" --version 2>/dev/null | head -n 1) ($out/report.png)"
