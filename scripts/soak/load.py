"""Client load for the soak: closed-loop clients, each checking every
receipt it gets with the client library (`layerproof verify-receipt`, or
`layerproof generate --prover`, which runs the same check/receipt.h and
follows a promise until its inclusion arrives).

- HTTPS clients send chat completions to a random prover's OpenAI API with
  a fresh X-LayerProof-Nonce, then run `verify-receipt --openai-request`.
  Exit 0: verified with its log inclusion. Exit 4: a receipt whose every
  check passed except that it holds the prover's signed promise instead of
  an inclusion (the log did not answer within the prover's receipt wait;
  the HTTP API has no call to follow it, so it is counted apart).
- gRPC clients run `generate --prover` (fresh nonce, promise followed up to
  --follow-seconds) with --save, and `verify-receipt` on the saved file.

A request the prover refused or never answered (a node down, a connection
reset, 429/503) is counted as refused. An answered request whose receipt
fails a check is a violation: its files are kept under violations/.

Thread safety: Stats is shared by every client thread under its lock.
"""
import collections
import http.client
import json
import os
import random
import shutil
import ssl
import subprocess
import threading
import time
import urllib.error
import urllib.request

WORDS = ("audit layer proof merkle log receipt prover verifier tensor "
         "kernel checkpoint commitment sample token batch").split()


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = collections.Counter()
        self.violations = []

    def add(self, key, n=1):
        with self.lock:
            self.counts[key] += n

    def violation(self, what):
        with self.lock:
            self.violations.append(what)
        print(f"soak: VIOLATION: {what}", flush=True)


def prompt(rng):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12)))


class Clients:
    def __init__(self, cluster, work, http_clients, grpc_clients, stop,
                 seed):
        self.cluster = cluster
        self.site = cluster.site
        self.work = work
        self.stop = stop  # threading.Event
        self.stats = Stats()
        self.threads = []
        self.seed = seed
        for i in range(http_clients):
            self.threads.append(threading.Thread(
                target=self.http_loop, args=(i,), name=f"http-{i}"))
        for i in range(grpc_clients):
            self.threads.append(threading.Thread(
                target=self.grpc_loop, args=(i,), name=f"grpc-{i}"))
        self.tls = ssl.create_default_context(cafile=self.site.pem("ca"))

    def start(self):
        for t in self.threads:
            t.start()

    def join(self, timeout):
        deadline = time.time() + timeout
        for t in self.threads:
            t.join(max(0.0, deadline - time.time()))
        return [t.name for t in self.threads if t.is_alive()]

    def keep(self, name, files):
        """Copies a failing request's files under violations/NAME/."""
        d = os.path.join(self.work, "violations", name)
        os.makedirs(d, exist_ok=True)
        for f in files:
            if os.path.exists(f):
                shutil.copy(f, d)
        return d

    def verify_args(self, prover_id):
        s = self.site
        return ["--prover-key", s.path(prover_id + ".pub"), "--log-key",
                s.path("verifier.pub"), "--prover-id", prover_id]

    def http_loop(self, i):
        rng = random.Random(self.seed * 1000 + i)
        d = os.path.join(self.work, "clients", f"http-{i}")
        os.makedirs(d, exist_ok=True)
        req_path = os.path.join(d, "request.json")
        resp_path = os.path.join(d, "response.json")
        n = 0
        while not self.stop.is_set():
            n += 1
            prover = rng.choice(self.cluster.provers())
            port = self.cluster.prover_ports[prover.name][1]
            body = {"model": self.site.served_model,
                    "messages": [{"role": "user", "content": prompt(rng)}],
                    "max_tokens": rng.randint(4, 24)}
            if rng.random() < 0.5:
                body["temperature"] = round(rng.uniform(0.2, 1.0), 2)
                body["top_p"] = 0.9
            else:
                body["temperature"] = 0
            nonce = os.urandom(16).hex()
            data = json.dumps(body).encode()
            req = urllib.request.Request(
                f"https://localhost:{port}/v1/chat/completions", data=data,
                headers={"Content-Type": "application/json",
                         "Authorization": f"Bearer {self.site.api_key}",
                         "X-LayerProof-Nonce": nonce})
            self.stats.add("http_sent")
            try:
                with urllib.request.urlopen(req, context=self.tls,
                                            timeout=120) as r:
                    answer = r.read()
            except urllib.error.HTTPError as e:
                self.stats.add(f"http_refused_{e.code}")
                self.stats.add("refused")
                time.sleep(0.5)
                continue
            except (urllib.error.URLError, OSError,
                    http.client.HTTPException) as e:
                self.stats.add("http_refused_conn")
                self.stats.add("refused")
                time.sleep(0.5)
                continue
            with open(req_path, "wb") as f:
                f.write(data)
            with open(resp_path, "wb") as f:
                f.write(answer)
            out = subprocess.run(
                [self.site.bin, "verify-receipt", resp_path,
                 "--openai-request", req_path, "--nonce", nonce, "--model",
                 self.site.model] + self.verify_args(prover.name),
                capture_output=True, text=True)
            self.stats.add("accepted")
            if out.returncode == 0:
                self.stats.add("verified")
                self.stats.add("http_verified")
            elif out.returncode == 4:
                self.stats.add("promised")
            else:
                kept = self.keep(f"http-{i}-{n}", [req_path, resp_path])
                self.stats.violation(
                    f"http-{i} request {n} to {prover.name}: verify-receipt "
                    f"exit {out.returncode}: {out.stdout}{out.stderr} "
                    f"(kept in {kept})")
            time.sleep(rng.uniform(0, 0.3))

    def grpc_loop(self, i):
        rng = random.Random(self.seed * 1000 + 500 + i)
        d = os.path.join(self.work, "clients", f"grpc-{i}")
        os.makedirs(d, exist_ok=True)
        saved = os.path.join(d, "receipt.json")
        n = 0
        while not self.stop.is_set():
            n += 1
            prover = rng.choice(self.cluster.provers())
            port = self.cluster.prover_ports[prover.name][0]
            if os.path.exists(saved):
                os.remove(saved)
            argv = [self.site.bin, "generate", "--prover",
                    f"localhost:{port}", "--prompt", prompt(rng),
                    "--max-tokens", str(rng.randint(4, 24)),
                    "--temperature", rng.choice(["0", "0.8"]),
                    "--follow-seconds", "300", "--save", saved,
                    "--tls-ca", self.site.pem("ca"), "--tls-name",
                    "localhost", "--client-cert", self.site.pem("client-1"),
                    "--client-key", self.site.key("client-1")
                    ] + self.verify_args(prover.name)
            self.stats.add("grpc_sent")
            out = subprocess.run(argv, capture_output=True, text=True)
            if out.returncode == 3:
                self.stats.add("grpc_refused")
                self.stats.add("refused")
                time.sleep(0.5)
                continue
            self.stats.add("accepted")
            if out.returncode != 0:
                kept = self.keep(f"grpc-{i}-{n}", [saved])
                self.stats.violation(
                    f"grpc-{i} request {n} to {prover.name}: generate exit "
                    f"{out.returncode}: {out.stderr[-2000:]} (kept in {kept})")
                continue
            # A promise followed until its inclusion arrived (exit 0) is
            # saved with that inclusion, which verify-receipt checks too.
            try:
                with open(saved) as f:
                    record = json.load(f)
            except (OSError, ValueError):
                record = {}
            if ("followedInclusion" in record or
                    "followed_inclusion" in record):
                self.stats.add("grpc_promise_followed")
            check = subprocess.run(
                [self.site.bin, "verify-receipt", saved] +
                self.verify_args(prover.name), capture_output=True, text=True)
            if check.returncode != 0:
                kept = self.keep(f"grpc-{i}-{n}", [saved])
                self.stats.violation(
                    f"grpc-{i} request {n}: verify-receipt of the saved "
                    f"receipt exit {check.returncode}: {check.stdout}"
                    f"{check.stderr} (kept in {kept})")
                continue
            self.stats.add("verified")
            self.stats.add("grpc_verified")
            time.sleep(rng.uniform(0, 0.3))
