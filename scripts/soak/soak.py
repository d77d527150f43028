#!/usr/bin/env python3
"""The soak (issue 17, item 5): a loopback cluster of real processes under
steady client load, with a chaos loop that restarts nodes, for MINUTES.

Cluster (cluster.py): one verifier with --remote-auditors, provers
(gRPC + the HTTPS OpenAI API) and `serve auditor` workers, over mTLS, all
on the model `layerproof model synth --preset small --seed 1` makes.

Load (load.py): HTTPS and gRPC clients, closed loop; every receipt a client
gets is checked by the client library.

Chaos: every CHAOS_MIN..CHAOS_MAX seconds one node of --chaos-nodes gets
SIGTERM or SIGKILL (at random), stays down 0..5 s and is restarted in
place (same ports, keys, journal, database). The verifier is restarted
only during the first --verifier-chaos-fraction of the run, so that its
last incarnation lives long enough to judge its resources; the nodes not
in --chaos-nodes (one prover, one auditor by default) live the whole run
while their peers restart around them.

Sampler: every --sample-seconds, each node's RSS and threads
(/proc/PID/status) and open descriptors (/proc/PID/fd), and the
verifier's layerproof_audits_pending and layerproof_audit_backlog.

At the end chaos and load stop, and the run fails unless:
- every accepted request's receipt verified (load.py);
- no node exited unless the chaos loop signalled it, SIGTERM always gave
  exit 0, and every restart was ready within 120 s;
- layerproof_audits_pending drains to 0 within --drain-seconds;
- the verifier's signed compliance report over the whole log
  (`layerproof report`) has only PASS verdicts, and at least as many
  commitments as requests were answered with a receipt;
- SIGTERM stops every node with exit 0, and `layerproof log fsck` passes
  on the verifier's log;
- resources stay flat (analysis.py states the rule).

Outputs in --out: samples.csv, verifier.csv, events.csv, summary.json,
soak.svg, and run/ (keys, databases, node logs, the report).
"""
import argparse
import csv
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analysis  # noqa: E402
from cluster import Cluster, Failure, Site, metric_sum, scrape  # noqa: E402
from load import Clients  # noqa: E402

READY_TIMEOUT = 120
TERM_TIMEOUT = 90


def proc_sample(pid):
    """(rss_kib, fds, threads, socket fds, RocksDB table file fds) of a
    live pid, or None."""
    try:
        rss = threads = None
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("Threads:"):
                    threads = int(line.split()[1])
        fds = os.listdir(f"/proc/{pid}/fd")
        sockets = sst = 0
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            sockets += target.startswith("socket:")
            sst += target.endswith(".sst")
    except (OSError, ValueError):
        return None
    if rss is None or threads is None:
        return None
    return rss, len(fds), threads, sockets, sst


class Soak:
    def __init__(self, args, repo):
        self.args = args
        self.out = os.path.abspath(args.out)
        self.work = os.path.join(self.out, "run")
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        self.site = Site(repo, os.path.abspath(args.layerproof), self.work,
                         args.provers, args.auditors)
        self.rng = random.Random(args.seed)
        self.stop_load = threading.Event()
        self.stop_chaos = threading.Event()
        self.stop_sampler = threading.Event()
        # Held by whoever stops or starts a node (chaos, crash recovery).
        self.nodes_lock = threading.Lock()
        self.samples = []
        self.verifier_samples = []
        self.events = []
        self.failures = []
        self.t0 = None

    def now(self):
        return time.time() - self.t0

    def fail(self, what):
        self.failures.append(what)
        print(f"soak: FAILURE: {what}", flush=True)

    # --- the sampler -----------------------------------------------------

    def sampler(self):
        f = open(os.path.join(self.out, "samples.csv"), "w", newline="")
        g = open(os.path.join(self.out, "verifier.csv"), "w", newline="")
        w = csv.writer(f)
        w.writerow(["t", "node", "role", "incarnation", "pid", "rss_kib",
                    "fds", "threads", "socket_fds", "sst_fds"])
        wv = csv.writer(g)
        wv.writerow(["t", "audits_pending", "audit_backlog", "log_size"])
        while not self.stop_sampler.wait(self.args.sample_seconds):
            t = round(self.now(), 1)
            for n in self.cluster.nodes:
                with n.lock:
                    proc, inc = n.proc, n.incarnation
                if proc.poll() is None:
                    s = proc_sample(proc.pid)
                    if s is None:
                        continue
                    row = {"t": t, "node": n.name, "role": n.role,
                           "incarnation": inc, "rss_kib": s[0], "fds": s[1],
                           "threads": s[2], "socket_fds": s[3],
                           "sst_fds": s[4]}
                    self.samples.append(row)
                    w.writerow([t, n.name, n.role, inc, proc.pid] +
                               list(s))
                elif not n.expected_exit:
                    self.recover_crash(n, proc.returncode)
            m = scrape(self.cluster.verifier.metrics_port, 2)
            row = {"t": t, "pending": None, "backlog": None, "log_size": None}
            if m is not None:
                row = {"t": t,
                       "pending": metric_sum(m, "layerproof_audits_pending"),
                       "backlog": metric_sum(m, "layerproof_audit_backlog"),
                       "log_size": metric_sum(m, "layerproof_log_size")}
            self.verifier_samples.append(row)
            wv.writerow([t, row["pending"], row["backlog"], row["log_size"]])
            f.flush()
            g.flush()
        f.close()
        g.close()

    def recover_crash(self, node, code):
        if not self.nodes_lock.acquire(blocking=False):
            return  # chaos is restarting something; look again next tick
        try:
            if node.proc.poll() is None or node.expected_exit:
                return
            self.fail(f"{node.name} (incarnation {node.incarnation}) exited "
                      f"{code} on its own at t={self.now():.0f} s; see "
                      f"{node.log_path}")
            self.events.append({"t": round(self.now(), 1),
                                "node": node.name, "signal": "crash",
                                "exit": code, "down_s": 0, "ready_s": None})
            node.start()
            node.wait_ready(READY_TIMEOUT)
        except Failure as e:
            self.fail(str(e))
        finally:
            self.nodes_lock.release()

    # --- chaos -----------------------------------------------------------

    def chaos(self, load_start):
        victims = [self.cluster.node(n) for n in self.args.chaos_nodes]
        verifier_until = load_start + (self.args.verifier_chaos_fraction *
                                       self.args.minutes * 60)
        # Nothing during the first half-minute of load (warm-up).
        if self.stop_chaos.wait(30):
            return
        while True:
            if self.stop_chaos.wait(self.rng.uniform(self.args.chaos_min,
                                                     self.args.chaos_max)):
                return
            pool = [v for v in victims
                    if v.role != "verifier" or self.now() < verifier_until]
            if not pool:
                continue
            victim = self.rng.choice(pool)
            sig = self.rng.choice([signal.SIGTERM, signal.SIGKILL])
            down = round(self.rng.uniform(0, 5), 1)
            with self.nodes_lock:
                self.restart(victim, sig, down)

    def restart(self, node, sig, down):
        t = round(self.now(), 1)
        node.signal(sig)
        code = node.wait_exit(TERM_TIMEOUT)
        event = {"t": t, "node": node.name, "signal": sig.name,
                 "exit": code, "down_s": down, "ready_s": None}
        self.events.append(event)
        if code is None:
            self.fail(f"{node.name} still running {TERM_TIMEOUT} s after "
                      f"{sig.name} at t={t} s")
            node.signal(signal.SIGKILL)
            node.wait_exit(30)
        elif sig == signal.SIGTERM and code != 0:
            self.fail(f"{node.name}: SIGTERM at t={t} s gave exit {code}; "
                      f"see {node.log_path}")
        print(f"soak: t={t:.0f}s {sig.name} {node.name} (exit {code}), "
              f"down {down} s", flush=True)
        time.sleep(down)
        started = time.time()
        node.start()
        try:
            node.wait_ready(READY_TIMEOUT)
            event["ready_s"] = round(time.time() - started, 2)
        except Failure as e:
            self.fail(f"restart at t={t} s: {e}")

    # --- the end ---------------------------------------------------------

    def drain(self):
        """Seconds until audits_pending and the backlog read 0, or None."""
        start = time.time()
        while time.time() - start < self.args.drain_seconds:
            m = scrape(self.cluster.verifier.metrics_port, 2)
            if m is not None:
                pending = metric_sum(m, "layerproof_audits_pending")
                backlog = metric_sum(m, "layerproof_audit_backlog")
                if pending == 0 and backlog == 0:
                    return round(time.time() - start, 1)
            time.sleep(1)
        return None

    def report(self):
        s = self.site
        path = os.path.join(self.work, "report.json")
        out = subprocess.run(
            [s.bin, "report", "--verifier",
             f"localhost:{self.cluster.verifier_port}", "--from", "0", "--to",
             "now", "--out", path, "--verifier-key", s.path("verifier.pub"),
             "--json", "--tls-ca", s.pem("ca"), "--server-name", "localhost",
             "--client-cert", s.pem("client-1"), "--client-key",
             s.key("client-1")], capture_output=True, text=True)
        if out.returncode != 0:
            self.fail(f"layerproof report: exit {out.returncode}: "
                      f"{out.stdout}{out.stderr}")
            return {}
        return json.loads(out.stdout)

    def shutdown(self):
        codes = {}
        for n in reversed(self.cluster.nodes):  # auditors, provers, verifier
            n.signal(signal.SIGTERM)
            code = n.wait_exit(TERM_TIMEOUT)
            codes[n.name] = code
            if code != 0:
                self.fail(f"final SIGTERM: {n.name} exit {code}")
                if code is None:
                    n.signal(signal.SIGKILL)
                    n.wait_exit(30)
        return codes

    def fsck(self):
        s = self.site
        out = subprocess.run(
            [s.bin, "log", "fsck", "--db", os.path.join(s.path("verifier-db"),
                                                        "log"),
             "--origin", "layerproof/verifier-1", "--key-name", "verifier-1",
             "--pub", s.path("verifier.pub")], capture_output=True, text=True)
        if out.returncode != 0:
            self.fail(f"log fsck: exit {out.returncode}: {out.stdout}"
                      f"{out.stderr}")
        return out.returncode

    # --- the run ---------------------------------------------------------

    def run(self):
        a = self.args
        print(f"soak: {a.minutes} min, {a.provers} provers, {a.auditors} "
              f"auditors, {a.http_clients}+{a.grpc_clients} clients, audit "
              f"rate {a.audit_rate}; out {self.out}", flush=True)
        self.site.make()
        self.cluster = Cluster(self.site, a.audit_rate, a.layers_per_audit,
                               a.threads)
        for name in a.chaos_nodes:
            self.cluster.node(name)  # raises StopIteration on a typo
        self.t0 = time.time()
        try:
            self.cluster.start_all(READY_TIMEOUT)
            sampler = threading.Thread(target=self.sampler, name="sampler")
            sampler.start()
            load_start = self.now()
            clients = Clients(self.cluster, self.work, a.http_clients,
                              a.grpc_clients, self.stop_load, a.seed)
            clients.start()
            chaos = threading.Thread(target=self.chaos, args=(load_start,),
                                     name="chaos")
            chaos.start()
            print(f"soak: cluster ready in {load_start:.1f} s; load and "
                  "chaos running", flush=True)
            end = time.time() + a.minutes * 60
            while time.time() < end:
                time.sleep(min(30, max(0, end - time.time())))
                c = clients.stats.counts
                print(f"soak: t={self.now():.0f}s accepted "
                      f"{c['accepted']} verified {c['verified']} promised "
                      f"{c['promised']} refused {c['refused']} restarts "
                      f"{len(self.events)}", flush=True)
            self.stop_chaos.set()
            chaos.join()
            load_end = self.now()
            self.stop_load.set()
            stuck = clients.join(400)
            if stuck:
                self.fail(f"clients still running 400 s after the load "
                          f"stopped: {stuck}")
            drained = self.drain()
            drained_at = self.now()
            if drained is None:
                self.fail(f"audits still pending {a.drain_seconds} s after "
                          "chaos and load stopped")
            print(f"soak: audits drained in {drained} s", flush=True)
            report = self.report()
            # A last minute of idle samples is not wanted: stop sampling.
            self.stop_sampler.set()
            sampler.join()
            codes = self.shutdown()
            fsck = self.fsck()
        finally:
            self.stop_chaos.set()
            self.stop_load.set()
            self.stop_sampler.set()
            for n in self.cluster.nodes:
                if n.proc is not None and n.proc.poll() is None:
                    n.signal(signal.SIGKILL)
                    n.wait_exit(30)
        return self.conclude(clients, report, codes, fsck, load_start,
                             load_end, drained, drained_at)

    def binary_info(self):
        src = os.path.abspath(self.args.layerproof)
        h = hashlib.sha256()
        with open(self.site.bin, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        head = subprocess.run(["git", "-C", self.site.repo, "rev-parse",
                               "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
        return {"path": src, "sha256": h.hexdigest(), "git_head": head,
                "built": time.strftime(
                    "%Y-%m-%d %H:%M:%S", time.gmtime(os.path.getmtime(
                        self.site.bin)))}

    def conclude(self, clients, report, codes, fsck, load_start, load_end,
                 drained, drained_at):
        a = self.args
        stats = clients.stats
        for v in stats.violations:
            self.fail(f"receipt: {v}")
        c = dict(stats.counts)
        totals = report.get("totals", {})
        verdicts = totals.get("verdicts", {})
        not_pass = {k: n for k, n in verdicts.items() if k != "PASS" and n}
        if not_pass:
            self.fail(f"verdicts other than PASS: {not_pass}")
        if report and totals.get("audits", 0) == 0:
            self.fail("no audit concluded: raise --audit-rate")
        # Every accepted request was committed, promised ones included
        # (more when a prover died between its commit and its answer).
        if report and totals.get("commitments", 0) < c.get("accepted", 0):
            self.fail(f"the log holds {totals.get('commitments')} "
                      f"commitments, fewer than the {c.get('accepted')} "
                      "requests answered with a receipt")
        if c.get("verified", 0) == 0:
            self.fail("no receipt verified")
        min_life = min(a.min_life_minutes * 60, 0.4 * a.minutes * 60)
        flat = analysis.judge(self.samples, min_life)
        for v in flat:
            if v["judged"] and not v["ok"]:
                self.fail(f"not flat: {v['node']} incarnation "
                          f"{v['incarnation']} ({v['life_s']} s): {v['why']}")
        for role in ("verifier", "prover", "auditor"):
            names = {n.name for n in self.cluster.nodes if n.role == role}
            if not any(v["judged"] for v in flat if v["node"] in names):
                self.fail(f"no {role} incarnation lived {min_life:.0f} s: "
                          "nothing to judge flatness on")
        restarts = {}
        for e in self.events:
            key = f"{e['node']} {e['signal']}"
            restarts[key] = restarts.get(key, 0) + 1
        with open(os.path.join(self.out, "events.csv"), "w",
                  newline="") as f:
            w = csv.DictWriter(f, ["t", "node", "signal", "exit", "down_s",
                                   "ready_s"])
            w.writeheader()
            w.writerows(self.events)
        summary = {
            "minutes": a.minutes,
            "binary": self.binary_info(),
            "cluster": {"verifier": 1, "provers": a.provers,
                        "auditors": a.auditors,
                        "http_clients": a.http_clients,
                        "grpc_clients": a.grpc_clients,
                        "audit_rate": a.audit_rate,
                        "layers_per_audit": a.layers_per_audit,
                        "chaos_nodes": a.chaos_nodes,
                        "chaos_interval_s": [a.chaos_min, a.chaos_max],
                        "verifier_chaos_fraction": a.verifier_chaos_fraction,
                        "seed": a.seed},
            "load_seconds": round(load_end - load_start),
            "requests": c,
            "restarts": restarts,
            "restart_count": len(self.events),
            "max_ready_s": max([e["ready_s"] or 0 for e in self.events],
                               default=0),
            "drain_s": drained,
            "report_totals": {k: totals.get(k) for k in (
                "commitments", "audits", "drawn_audits", "on_demand_audits",
                "realised_audit_rate", "failures", "log_entries_scanned")},
            "verdicts": verdicts,
            "final_exit_codes": codes,
            "fsck_exit": fsck,
            "flatness_rule": {"min_life_s": min_life,
                              "rss_pct": analysis.RSS_PCT,
                              "rss_abs_mib": analysis.RSS_ABS_MIB,
                              "fd_abs": analysis.FD_ABS,
                              "thread_abs": analysis.THREAD_ABS},
            "flatness": flat,
            "start_end": analysis.start_end(self.samples, load_start + 30,
                                            drained_at),
            "failures": self.failures,
        }
        with open(os.path.join(self.out, "summary.json"), "w") as f:
            json.dump(summary, f, indent=1)
        analysis.plot(os.path.join(self.out, "soak.svg"),
                      f"layerproof soak: {a.minutes} min, "
                      f"{len(self.events)} restarts, "
                      f"{c.get('verified', 0)} receipts verified, "
                      f"{totals.get('audits', 0)} audits",
                      self.samples, self.verifier_samples, self.events,
                      drained_at)
        print(json.dumps({k: summary[k] for k in (
            "requests", "restarts", "drain_s", "report_totals", "verdicts")},
            indent=1))
        for node, se in summary["start_end"].items():
            print(f"  {node}: start {se.get('start')} end {se.get('end')}")
        for v in flat:
            if v["judged"]:
                print(f"  flat {'ok ' if v['ok'] else 'NO '} {v['node']}#"
                      f"{v['incarnation']} {v['life_s']} s: q2 {v['q2']} "
                      f"q4 {v['q4']} slope {v['rss_slope_mib_per_h']} MiB/h "
                      f"{v['why']}")
        if self.failures:
            print(f"soak: FAIL ({len(self.failures)}):", file=sys.stderr)
            for f in self.failures:
                print(f"  {f}", file=sys.stderr)
            return 1
        print(f"soak: PASS; outputs in {self.out}")
        return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("minutes", nargs="?", type=float, default=30)
    p.add_argument("--layerproof", default="build/cli/layerproof")
    p.add_argument("--out", default="soak-out")
    p.add_argument("--provers", type=int, default=2)
    p.add_argument("--auditors", type=int, default=2)
    p.add_argument("--http-clients", type=int, default=3)
    p.add_argument("--grpc-clients", type=int, default=2)
    p.add_argument("--audit-rate", type=float, default=0.5)
    p.add_argument("--layers-per-audit", type=int, default=2)
    p.add_argument("--threads", type=int, default=1,
                   help="engine threads per node (2 cores are shared)")
    p.add_argument("--chaos-nodes", default="verifier,prover-1,auditor-1",
                   type=lambda s: s.split(","))
    p.add_argument("--chaos-min", type=float, default=15)
    p.add_argument("--chaos-max", type=float, default=45)
    p.add_argument("--verifier-chaos-fraction", type=float, default=0.6)
    p.add_argument("--sample-seconds", type=float, default=3)
    p.add_argument("--drain-seconds", type=float, default=300)
    p.add_argument("--min-life-minutes", type=float, default=5)
    p.add_argument("--seed", type=int, default=int(time.time()))
    args = p.parse_args()
    repo = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    try:
        return Soak(args, repo).run()
    except Failure as e:
        print(f"soak: FAIL: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
