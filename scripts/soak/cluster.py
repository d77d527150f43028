"""A loopback LayerProof cluster of real `layerproof serve` processes.

One verifier (with --remote-auditors), N provers (gRPC, the HTTPS OpenAI
API) and M `serve auditor` workers, over mTLS with a throwaway CA
(scripts/make-test-certs.sh), each node on fixed loopback ports so that it
can be restarted in place. The flags are the ones deploy/k8s/base gives the
pods; docs/operations.md documents them.

Thread safety: a Node's start/stop/pid are guarded by its own lock, so a
chaos thread may restart a node while a sampler thread reads its pid.
"""
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from loopback_ports import free_port as draw_port  # noqa: E402


class Failure(Exception):
    pass


# The ports of this run's nodes. They are fixed for the whole run and drawn
# from below the ephemeral range (scripts/lib/loopback_ports.py), so the
# soak's own client connections cannot take a port while its node restarts.
_handed_out = set()


def free_port():
    return draw_port(_handed_out)


def scrape(port, timeout=5):
    """{metric name with labels: value} from a node's /metrics, or None."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics",
                                    timeout=timeout) as r:
            text = r.read().decode()
    except OSError:
        return None
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name, _, value = line.rpartition(" ")
        try:
            out[name] = float(value)
        except ValueError:
            pass
    return out


def metric_sum(sample, name):
    """Sum of every series of `name` in a scrape (labels or none)."""
    return sum(v for k, v in sample.items()
               if k == name or k.startswith(name + "{"))


class Node:
    """One node: its command line, its log, its current process."""

    def __init__(self, name, role, argv, logs, ready):
        self.name = name
        self.role = role
        self.argv = argv
        self.log_path = os.path.join(logs, f"{name}.log")
        self.ready = ready  # callable: is this incarnation ready?
        self.metrics_port = None
        self.incarnation = 0
        self.proc = None
        self.lock = threading.Lock()
        # Set by whoever signals the process on purpose, so that an exit
        # nobody asked for counts as a crash.
        self.expected_exit = False

    def start(self):
        with self.lock:
            self.incarnation += 1
            self.expected_exit = False
            with open(self.log_path, "a") as log:
                log.write(f"=== {time.strftime('%H:%M:%S')} incarnation "
                          f"{self.incarnation}: {' '.join(self.argv)}\n")
                log.flush()
                self.proc = subprocess.Popen(self.argv, stdout=log,
                                             stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL)

    def pid(self):
        with self.lock:
            if self.proc is None or self.proc.poll() is not None:
                return None
            return self.proc.pid

    def wait_ready(self, timeout):
        deadline = time.time() + timeout
        while not self.ready():
            if self.proc.poll() is not None:
                raise Failure(f"{self.name} exited {self.proc.returncode} "
                              f"while starting; see {self.log_path}")
            if time.time() > deadline:
                raise Failure(f"{self.name}: not ready in {timeout} s")
            time.sleep(0.25)

    def signal(self, sig):
        with self.lock:
            self.expected_exit = True
            if self.proc.poll() is None:
                self.proc.send_signal(sig)

    def wait_exit(self, timeout):
        """The exit code, or None if it is still running after timeout."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None


class Site:
    """Keys, certificates, the model and the configuration files."""

    def __init__(self, repo, binary, work, provers, auditors):
        self.repo = repo
        self.work = work
        # A copy: other builds may relink the tree's binary during a run,
        # and a restart must run the same program as the first start.
        os.makedirs(os.path.join(work, "bin"), exist_ok=True)
        self.bin = os.path.join(work, "bin", "layerproof")
        shutil.copy2(binary, self.bin)
        self.prover_ids = [f"prover-{i + 1}" for i in range(provers)]
        self.auditor_ids = [f"auditor-{i + 1}" for i in range(auditors)]
        self.certs = os.path.join(work, "certs")
        self.model = os.path.join(work, "model")
        self.logs = os.path.join(work, "logs")
        self.served_model = "soak-small"
        self.api_key = os.urandom(24).hex()

    def run(self, *argv):
        out = subprocess.run(list(argv), capture_output=True, text=True)
        if out.returncode != 0:
            raise Failure(f"{' '.join(argv)}: exit {out.returncode}\n"
                          f"{out.stdout}{out.stderr}")
        return out.stdout

    def make(self):
        os.makedirs(self.logs, exist_ok=True)
        names = (["verifier-1", "client-1"] + self.prover_ids +
                 self.auditor_ids)
        self.run("bash", os.path.join(self.repo, "scripts",
                                      "make-test-certs.sh"), self.certs,
                 *names)
        self.run(self.bin, "model", "synth", "--preset", "small", "--seed",
                 "1", "--out", self.model)
        self.run(self.bin, "keygen", "--out", self.path("verifier"))
        for p in self.prover_ids:
            self.run(self.bin, "keygen", "--out", self.path(p))
        roles = {"verifier-1": ["auditor"], "client-1": ["client", "auditor"]}
        roles.update({p: ["prover"] for p in self.prover_ids})
        roles.update({a: ["auditor"] for a in self.auditor_ids})
        self.write("roles.json", roles)
        self.write("api-keys.json", {self.api_key: "client-1"})

    def path(self, name):
        return os.path.join(self.work, name)

    def write(self, name, obj):
        with open(self.path(name), "w") as f:
            json.dump(obj, f)

    def pem(self, name):
        return os.path.join(self.certs, f"{name}.pem")

    def key(self, name):
        return os.path.join(self.certs, f"{name}.key")

    def tls_client(self, who="client-1"):
        """Flags of a client command (health, report, generate) as `who`."""
        return ["--peer-ca", self.pem("ca"), "--peer-name", "localhost",
                "--client-cert", self.pem(who), "--client-key", self.key(who)]

    def server_tls(self, who):
        return ["--tls-cert", self.pem("server"), "--tls-key",
                self.key("server"), "--tls-ca", self.pem("ca"), "--roles",
                self.path("roles.json"), "--peer-ca", self.pem("ca"),
                "--peer-name", "localhost", "--client-cert", self.pem(who),
                "--client-key", self.key(who)]

    def health(self, port):
        def probe():
            return subprocess.run(
                [self.bin, "health", f"127.0.0.1:{port}", "--timeout-ms",
                 "2000"] + self.tls_client(),
                capture_output=True).returncode == 0
        return probe


class Cluster:
    """The nodes of a Site, their ports fixed for the whole run."""

    def __init__(self, site, audit_rate, layers_per_audit, threads):
        self.site = site
        s = site
        self.verifier_port = free_port()
        self.submit_port = free_port()
        self.audit_work_port = free_port()
        self.prover_ports = {p: (free_port(), free_port())
                             for p in s.prover_ids}  # gRPC, HTTPS
        s.write("provers.json", {"provers": [
            {"id": p, "public_key_file": s.path(p + ".pub"),
             "opening_address": f"localhost:{self.prover_ports[p][0]}"}
            for p in s.prover_ids]})
        self.nodes = []
        v = Node("verifier", "verifier", [
            s.bin, "serve", "verifier", "--model", s.model,
            "--verifier-id", "verifier-1", "--key", s.path("verifier.key"),
            "--db", s.path("verifier-db"), "--provers",
            s.path("provers.json"), "--audit-rate", str(audit_rate),
            "--layers-per-audit", str(layers_per_audit),
            "--audit-threads", "4", "--remote-auditors",
            "--audit-lease-seconds", "30", "--opening-timeout-ms", "120000",
            "--threads", str(threads),
            "--listen", f"127.0.0.1:{self.verifier_port}",
            "--submit-listen", f"127.0.0.1:{self.submit_port}",
            "--audit-work-listen", f"127.0.0.1:{self.audit_work_port}",
        ] + s.server_tls("verifier-1"), s.logs, s.health(self.verifier_port))
        self.verifier = self.add(v)
        for p in s.prover_ids:
            grpc_port, http_port = self.prover_ports[p]
            self.add(Node(p, "prover", [
                s.bin, "serve", "prover", "--model", s.model,
                "--served-model-name", s.served_model, "--prover-id", p,
                "--key", s.path(p + ".key"), "--journal",
                s.path(p + "-journal"), "--verifier",
                f"localhost:{self.submit_port}", "--verifier-id",
                "verifier-1", "--log-key", s.path("verifier.pub"),
                "--threads", str(threads),
                "--listen", f"127.0.0.1:{grpc_port}",
                "--http-listen", f"127.0.0.1:{http_port}",
                "--api-keys", s.path("api-keys.json"),
            ] + s.server_tls(p), s.logs, s.health(grpc_port)))
        for a in s.auditor_ids:
            node = Node(a, "auditor", [
                s.bin, "serve", "auditor", "--verifier",
                f"localhost:{self.audit_work_port}", "--model", s.model,
                "--worker-id", a, "--concurrency", "1",
                "--threads", str(threads),
                "--peer-ca", s.pem("ca"), "--peer-name", "localhost",
                "--client-cert", s.pem(a), "--client-key", s.key(a),
            ], s.logs, None)
            self.add(node)
            # An auditor serves no gRPC: ready once its metrics answer.
            node.ready = (lambda n: lambda: scrape(n.metrics_port, 1)
                          is not None)(node)

    def add(self, node):
        node.metrics_port = free_port()
        node.argv += ["--metrics-listen", f"127.0.0.1:{node.metrics_port}"]
        self.nodes.append(node)
        return node

    def node(self, name):
        return next(n for n in self.nodes if n.name == name)

    def provers(self):
        return [n for n in self.nodes if n.role == "prover"]

    def start_all(self, timeout=120):
        for n in self.nodes:  # verifier first, then provers and auditors
            n.start()
            n.wait_ready(timeout)
