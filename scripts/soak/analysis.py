"""What the soak concludes from its samples: whether each long-lived node
incarnation's RSS, open file descriptors and threads stayed flat, the
per-node start and end figures, and the plot.

"Flat", per process incarnation that lived at least MIN_LIFE seconds (and
gave at least 20 samples): split its life into quarters by time; the first
is warm-up (connections, caches, allocator arenas, RocksDB memtables fill);
the median of the last quarter must not exceed the median of the second by
more than
  RSS:      RSS_PCT of it plus RSS_ABS_MIB,
  fds:      FD_ABS descriptors,
  threads:  THREAD_ABS threads.
Medians, not maxima, so that a burst (a batch of concurrent requests, a
compaction) does not count; a leak that grows with requests moves the
median. The least-squares slope of RSS after warm-up (MiB per hour) is
reported beside it.

Pure functions; not thread-safe with respect to a list being appended to.

As a script it re-draws a finished run's plot from its CSV files:
  python3 scripts/soak/analysis.py OUT_DIR [--svg FILE] [--points N]
"""
import argparse
import csv
import json
import os
import statistics

import svg_plot

RSS_PCT = 0.10
RSS_ABS_MIB = 8.0
FD_ABS = 4
THREAD_ABS = 4

COLORS = {"verifier": "#d62728", "prover-1": "#1f77b4",
          "prover-2": "#17becf", "prover-3": "#9467bd",
          "auditor-1": "#2ca02c", "auditor-2": "#8c564b",
          "auditor-3": "#bcbd22"}


def color(node):
    return COLORS.get(node, "#7f7f7f")


def incarnations(samples):
    """{(node, incarnation): [sample, ...]} in time order. A sample is a
    dict with t, node, role, incarnation, rss_kib, fds, threads, socket_fds
    and sst_fds (descriptors of RocksDB .sst files, part of fds)."""
    out = {}
    for s in samples:
        out.setdefault((s["node"], s["incarnation"]), []).append(s)
    for v in out.values():
        v.sort(key=lambda s: s["t"])
    return out


def slope_per_hour(xs, ys):
    n = len(xs)
    if n < 2:
        return 0.0
    mx, my = sum(xs) / n, sum(ys) / n
    den = sum((x - mx) ** 2 for x in xs)
    if den == 0:
        return 0.0
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den * 3600


def judge(samples, min_life):
    """[{node, incarnation, life_s, judged, ok, q2, q4, rss_slope, why}]."""
    verdicts = []
    for (node, inc), ss in sorted(incarnations(samples).items()):
        t0, t1 = ss[0]["t"], ss[-1]["t"]
        life = t1 - t0
        v = {"node": node, "incarnation": inc, "life_s": round(life),
             "samples": len(ss), "judged": False, "ok": True, "why": ""}
        verdicts.append(v)
        if life < min_life or len(ss) < 20:
            continue
        q = life / 4
        q2 = [s for s in ss if t0 + q <= s["t"] < t0 + 2 * q]
        q4 = [s for s in ss if s["t"] >= t0 + 3 * q]
        if len(q2) < 3 or len(q4) < 3:
            continue
        v["judged"] = True
        med = {}
        for key in ("rss_kib", "fds", "threads", "socket_fds", "sst_fds"):
            med[key] = (statistics.median(s[key] for s in q2),
                        statistics.median(s[key] for s in q4))
        v["q2"] = {"rss_mib": round(med["rss_kib"][0] / 1024, 1),
                   "fds": med["fds"][0], "threads": med["threads"][0],
                   "socket_fds": med["socket_fds"][0],
                   "sst_fds": med["sst_fds"][0]}
        v["q4"] = {"rss_mib": round(med["rss_kib"][1] / 1024, 1),
                   "fds": med["fds"][1], "threads": med["threads"][1],
                   "socket_fds": med["socket_fds"][1],
                   "sst_fds": med["sst_fds"][1]}
        after = [s for s in ss if s["t"] >= t0 + q]
        v["rss_slope_mib_per_h"] = round(slope_per_hour(
            [s["t"] for s in after], [s["rss_kib"] / 1024 for s in after]), 1)
        why = []
        r2, r4 = v["q2"]["rss_mib"], v["q4"]["rss_mib"]
        if r4 > r2 * (1 + RSS_PCT) + RSS_ABS_MIB:
            why.append(f"RSS {r2} -> {r4} MiB (limit "
                       f"{r2 * (1 + RSS_PCT) + RSS_ABS_MIB:.1f})")
        if med["fds"][1] > med["fds"][0] + FD_ABS:
            why.append(f"fds {med['fds'][0]} -> {med['fds'][1]}")
        if med["threads"][1] > med["threads"][0] + THREAD_ABS:
            why.append(f"threads {med['threads'][0]} -> "
                       f"{med['threads'][1]}")
        v["ok"] = not why
        v["why"] = "; ".join(why)
    return verdicts


def start_end(samples, t_start, t_end, window=60):
    """{node: {start: {...}, end: {...}}}: medians over the first `window`
    seconds from t_start and the last `window` seconds before t_end."""
    out = {}
    for node in sorted({s["node"] for s in samples}):
        ss = [s for s in samples if s["node"] == node]
        res = {}
        for name, lo, hi in (("start", t_start, t_start + window),
                             ("end", t_end - window, t_end)):
            w = [s for s in ss if lo <= s["t"] <= hi]
            if not w:
                continue
            res[name] = {
                "rss_mib": round(statistics.median(s["rss_kib"]
                                                   for s in w) / 1024, 1),
                "fds": statistics.median(s["fds"] for s in w),
                "threads": statistics.median(s["threads"] for s in w),
                "socket_fds": statistics.median(s["socket_fds"] for s in w),
                "sst_fds": statistics.median(s["sst_fds"] for s in w)}
        out[node] = res
    return out


def downsample(points, bucket):
    """Means of (x, y) points over x buckets of width `bucket`."""
    out, cur, key = [], [], None
    for x, y in points:
        k = int(x // bucket)
        if key is not None and k != key:
            out.append((sum(p[0] for p in cur) / len(cur),
                        sum(p[1] for p in cur) / len(cur)))
            cur = []
        key = k
        cur.append((x, y))
    if cur:
        out.append((sum(p[0] for p in cur) / len(cur),
                    sum(p[1] for p in cur) / len(cur)))
    return out


def plot(path, title, samples, verifier_samples, events, duration_s,
         points=150):
    """The soak's SVG: RSS, fds and threads per node, and the verifier's
    audit backlog, over minutes; restarts marked (solid: SIGKILL, dashed:
    SIGTERM) in the restarted node's color."""
    bucket = max(duration_s / points, 1.0) / 60  # in minutes
    by_inc = incarnations(samples)
    nodes = sorted({n for n, _ in by_inc},
                   key=lambda n: (n != "verifier", n))
    panels = []
    for key, label, scale in (("rss_kib", "RSS (MiB)", 1 / 1024),
                              ("fds", "open file descriptors", 1),
                              ("threads", "threads", 1)):
        series = []
        for node in nodes:
            segs = [downsample([(s["t"] / 60, s[key] * scale) for s in ss],
                               bucket)
                    for (n, _), ss in sorted(by_inc.items()) if n == node]
            series.append((color(node), segs))
        panels.append((label, series))
    pending = [[(s["t"] / 60, s["pending"]) for s in verifier_samples
                if s["pending"] is not None]]
    backlog = [[(s["t"] / 60, s["backlog"]) for s in verifier_samples
                if s["backlog"] is not None]]
    panels.append(("verifier: audits pending (black), audit backlog (orange)",
                   [("#000", [downsample(p, bucket) for p in pending]),
                    ("#ff7f0e", [downsample(p, bucket) for p in backlog])]))
    marks = [(e["t"] / 60, color(e["node"]), e["signal"] == "SIGTERM")
             for e in events]
    legend = [(n, color(n), "line") for n in nodes]
    legend += [("restart: SIGKILL", "#555", "solid"),
               ("SIGTERM", "#555", "dashed")]
    svg_plot.render(path, title, panels, marks, duration_s / 60,
                    legend=legend)


def replot(out_dir, svg, points):
    """Re-draws `svg` from the samples, verifier and events CSVs and the
    summary of the run in `out_dir`."""
    def rows(name):
        with open(os.path.join(out_dir, name), newline="") as f:
            return list(csv.DictReader(f))

    def num(v):
        return None if v in ("", "None") else float(v)

    samples = [{"t": float(r["t"]), "node": r["node"], "role": r["role"],
                "incarnation": int(r["incarnation"]),
                "rss_kib": int(r["rss_kib"]), "fds": int(r["fds"]),
                "threads": int(r["threads"])} for r in rows("samples.csv")]
    verifier = [{"t": float(r["t"]), "pending": num(r["audits_pending"]),
                 "backlog": num(r["audit_backlog"])}
                for r in rows("verifier.csv")]
    events = [{"t": float(r["t"]), "node": r["node"], "signal": r["signal"]}
              for r in rows("events.csv")]
    with open(os.path.join(out_dir, "summary.json")) as f:
        summary = json.load(f)
    duration = max(s["t"] for s in samples + verifier)
    plot(svg, f"layerproof soak: {summary['minutes']:g} min, "
         f"{summary['restart_count']} restarts, "
         f"{summary['requests'].get('verified', 0)} receipts verified, "
         f"{summary['report_totals'].get('audits', 0)} audits",
         samples, verifier, events, duration, points)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--svg")
    parser.add_argument("--points", type=int, default=150)
    args = parser.parse_args()
    replot(args.out_dir, args.svg or os.path.join(args.out_dir, "soak.svg"),
           args.points)
