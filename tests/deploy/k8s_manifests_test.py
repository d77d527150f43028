#!/usr/bin/env python3
"""The Kubernetes manifests (deploy/k8s), checked without a cluster.

1. `kubectl kustomize` renders the base's overlays (cpu, gpu,
   cert-manager), and each holds what docs/operations.md promises of it.
2. A site made by deploy/k8s/new-site.sh (the documented path) is rendered
   and run here: every workload's init containers and container, with the
   command line, environment and mounted ConfigMaps and Secrets the
   rendered YAML gives it, as local processes on 127.0.0.1. Until their
   readiness probes (also run as written) pass, nothing else starts. Then a
   chat completion goes through the prover's OpenAI-compatible API, its
   receipt must pass `layerproof verify-receipt`, and its audit must come
   back PASS from an auditor worker.
3. The NetworkPolicies are evaluated against every connection the run
   made, and against the ones they must refuse.

What a cluster would do and this does by hand: cluster DNS (a Service's
name and port become the selected pod's port on loopback; certificates
carry `localhost` for that, new-site.sh --san), port allocation (each
containerPort gets a free port, chosen before the site's first process
starts because each process is told the others' ports; scripts/lib/
loopback_ports.py says how it stays free until the node binds it, and a
port taken anyway makes the site start over on fresh ports, a bounded
number of times), volume mounts (paths under a mountPath are
rewritten to a directory holding the volume's files, owned and moded as
the kubelet does it, fsGroup included), $(VAR) expansion, and the pod's
user: run as root, the test starts every process and probe under the
pod's runAsUser, runAsGroup and fsGroup (setpriv), in /.

usage: k8s_manifests_test.py --layerproof BIN --repo DIR --work DIR
"""
import argparse
import base64
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts", "lib"))
from loopback_ports import free_port  # noqa: E402

NAMESPACE = "layerproof"
BINARY = "/usr/local/bin/layerproof"
SERVICE_SUFFIXES = ("", "." + NAMESPACE + ".svc",
                    "." + NAMESPACE + ".svc.cluster.local")
# Passed from the test's environment to every container's.
SANITIZER_SETTINGS = ("ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS",
                      "TSAN_OPTIONS")


class Failure(Exception):
    pass


class PortTaken(Failure):
    """A node could not listen on the port chosen for it: something else
    on this machine bound it after free_port released it."""


# How many times the site starts before a taken port is a failure. Each
# start draws fresh ports, so a second collision is already rare.
SITE_STARTS = 3


def check(condition, what):
    if not condition:
        raise Failure(what)


def render(path):
    out = subprocess.run(["kubectl", "kustomize", path], capture_output=True,
                         text=True)
    check(out.returncode == 0,
          f"kubectl kustomize {path} failed:\n{out.stderr}")
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def objects(docs, kind):
    return [d for d in docs if d["kind"] == kind]


def by_name(docs, kind, name):
    """The object of `kind` named `name`, or named `name-<kustomize hash>`."""
    found = [d for d in objects(docs, kind)
             if re.fullmatch(re.escape(name) + r"(-[a-z0-9]{10})?",
                             d["metadata"]["name"])]
    check(len(found) == 1, f"want one {kind} {name}, got {len(found)}")
    return found[0]


def pod_spec(workload):
    return workload["spec"]["template"]["spec"]


def container(workload, name):
    for c in pod_spec(workload)["containers"]:
        if c["name"] == name:
            return c
    raise Failure(f"{workload['metadata']['name']}: no container {name}")


# --- 1. The overlays -------------------------------------------------------

def check_common(docs, overlay):
    verifier = by_name(docs, "StatefulSet", "layerproof-verifier")
    check(verifier["spec"]["replicas"] == 1,
          f"{overlay}: the verifier is one sequencer")
    check(verifier["spec"]["volumeClaimTemplates"],
          f"{overlay}: the verifier's RocksDB needs a PersistentVolumeClaim")
    pdb = by_name(docs, "PodDisruptionBudget", "layerproof-verifier")
    check(pdb["spec"]["selector"]["matchLabels"].items() <=
          verifier["spec"]["template"]["metadata"]["labels"].items(),
          f"{overlay}: the PodDisruptionBudget must select the verifier")
    check("readinessProbe" in container(verifier, "verifier"),
          f"{overlay}: the verifier needs a readiness probe")
    prover = by_name(docs, "Deployment", "layerproof-prover")
    check(prover["spec"]["strategy"]["type"] == "Recreate",
          f"{overlay}: one prover identity must never run twice")
    hpa = by_name(docs, "HorizontalPodAutoscaler", "layerproof-auditor")
    check(hpa["spec"]["scaleTargetRef"]["name"] == "layerproof-auditor",
          f"{overlay}: the HPA scales the auditors")
    metrics = [(m["type"], m["object"]["describedObject"]["kind"],
                m["object"]["describedObject"]["name"],
                m["object"]["metric"]["name"]) for m in hpa["spec"]["metrics"]]
    check(metrics == [("Object", "Service", "layerproof-verifier",
                       "layerproof_audit_backlog")],
          f"{overlay}: the HPA follows the verifier's audit backlog, got "
          f"{metrics}")
    check("replicas" not in by_name(docs, "Deployment",
                                    "layerproof-auditor")["spec"],
          f"{overlay}: the HPA, not the Deployment, owns the auditor count")
    for workload in objects(docs, "StatefulSet") + objects(docs, "Deployment"):
        spec = pod_spec(workload)
        name = workload["metadata"]["name"]
        check(spec["securityContext"].get("runAsNonRoot") is True,
              f"{overlay}: {name} must run as non-root")
        # A Secret file only its owner (root) may read needs fsGroup to be
        # readable by the pod's user (the kubelet then adds group read).
        for v in spec["volumes"]:
            if "secret" in v and not v["secret"].get("defaultMode",
                                                    0o644) & 0o044:
                check("fsGroup" in spec["securityContext"],
                      f"{overlay}: {name} cannot read Secret volume "
                      f"{v['name']} (mode 0{v['secret']['defaultMode']:o}, "
                      "no fsGroup)")
        for c in spec.get("initContainers", []) + spec["containers"]:
            sc = c.get("securityContext", {})
            check(sc.get("readOnlyRootFilesystem") is True and
                  sc.get("allowPrivilegeEscalation") is False,
                  f"{overlay}: {name}/{c['name']}: read-only root, no "
                  "privilege escalation")
    check(len(objects(docs, "NetworkPolicy")) >= 4,
          f"{overlay}: NetworkPolicies missing")
    # allowed() below evaluates matchLabels only.
    check("matchExpressions" not in json.dumps(objects(docs, "NetworkPolicy")),
          f"{overlay}: matchExpressions in a NetworkPolicy: extend allowed()")


def check_overlays(repo):
    overlays = os.path.join(repo, "deploy", "k8s", "overlays")
    rendered = {}
    for overlay in sorted(os.listdir(overlays)):
        docs = render(os.path.join(overlays, overlay))
        check_common(docs, overlay)
        rendered[overlay] = docs
        print(f"  rendered {overlay}: {len(docs)} objects")
    check(set(rendered) == {"cpu", "gpu", "cert-manager"},
          f"overlays: got {sorted(rendered)}")

    prover = container(by_name(rendered["gpu"], "Deployment",
                               "layerproof-prover"), "prover")
    check(prover["resources"]["limits"].get("nvidia.com/gpu") == 1,
          "gpu: the prover must request nvidia.com/gpu")
    check("--backend=cuda" in prover["args"], "gpu: the prover serves on cuda")
    for overlay in ("cpu", "cert-manager"):
        cpu_prover = container(by_name(rendered[overlay], "Deployment",
                                       "layerproof-prover"), "prover")
        check("nvidia.com/gpu" not in cpu_prover["resources"]["limits"],
              f"{overlay}: no GPU")

    # cert-manager issues every TLS Secret a workload mounts, with a common
    # name roles.json knows.
    docs = rendered["cert-manager"]
    roles = json.loads(by_name(docs, "ConfigMap",
                               "layerproof-roles")["data"]["roles.json"])
    certs = {c["spec"]["secretName"]: c for c in objects(docs, "Certificate")}
    mounted = {v["secret"]["secretName"]
               for w in objects(docs, "StatefulSet") + objects(docs, "Deployment")
               for v in pod_spec(w)["volumes"]
               if "secret" in v and "-tls-" in v["secret"]["secretName"]}
    check(len(mounted) == 3, f"cert-manager: TLS Secrets mounted: {mounted}")
    for secret in mounted:
        check(secret in certs, f"cert-manager: no Certificate for {secret}")
    # The callers that need a role hold it (the verifier only serves).
    for secret, role in (("layerproof-tls-prover-1", "prover"),
                         ("layerproof-tls-auditor", "auditor")):
        cn = certs[secret]["spec"]["commonName"]
        check(role in roles.get(cn, []),
              f"cert-manager: {secret}'s common name {cn} lacks role {role}")


# --- 2. The site, run locally ----------------------------------------------

class Pod:
    def __init__(self, workload, name, handed_out):
        self.workload = workload
        self.name = name
        self.labels = workload["spec"]["template"]["metadata"]["labels"]
        self.spec = pod_spec(workload)
        # containerPort -> loopback port, and port name -> containerPort.
        self.ports = {}
        self.port_names = {}
        for c in self.spec["containers"]:
            for p in c.get("ports", []):
                self.ports[p["containerPort"]] = free_port(handed_out)
                if "name" in p:
                    self.port_names[p["name"]] = p["containerPort"]
        self.volumes = {}  # volume name -> host directory
        self.processes = []
        security = self.spec.get("securityContext", {})
        self.uid = security.get("runAsUser", 0)
        self.gid = security.get("runAsGroup", self.uid)
        self.fs_group = security.get("fsGroup")


class LocalCluster:
    def __init__(self, docs, binary, work, root):
        self.docs = docs
        self.work = work
        # Volumes and the binary live under `root`, a directory every uid
        # can traverse (the pods' users are not root).
        self.root = root
        os.chmod(root, 0o755)
        os.makedirs(os.path.join(root, "bin"))
        self.binary = os.path.join(root, "bin", "layerproof")
        shutil.copy(binary, self.binary)
        os.chmod(self.binary, 0o755)
        self.as_root = os.geteuid() == 0
        self.pods = []
        handed_out = set()
        for w in objects(docs, "StatefulSet"):
            self.pods.append(Pod(w, w["metadata"]["name"] + "-0", handed_out))
        for w in objects(docs, "Deployment"):
            self.pods.append(Pod(w, w["metadata"]["name"] + "-local",
                                 handed_out))
        # (source pod, target pod, containerPort) of every connection made.
        self.edges = set()

    # Cluster DNS: a Service name and port -> the selected pod's port.
    def service_target(self, service_name, port):
        svc = [s for s in objects(self.docs, "Service")
               if s["metadata"]["name"] == service_name]
        if not svc:
            return None
        selector = svc[0]["spec"]["selector"]
        pods = [p for p in self.pods
                if selector.items() <= p.labels.items()]
        check(len(pods) == 1,
              f"Service {service_name} selects {len(pods)} pods, want 1")
        for sp in svc[0]["spec"]["ports"]:
            if sp["port"] == port:
                target = sp.get("targetPort", port)
                if isinstance(target, str):
                    target = pods[0].port_names[target]
                return pods[0], target
        raise Failure(f"Service {service_name} has no port {port}")

    def rewrite(self, text, pod, source=None, paths=True):
        """`text` as `pod` sees it here: addresses, and with `paths` the
        mounted paths. `source` records the connections it names."""
        def own(m):
            port = int(m.group(2))
            if port not in pod.ports:
                return m.group(0)
            return f"127.0.0.1:{pod.ports[port]}"
        text = re.sub(r"\b(0\.0\.0\.0|127\.0\.0\.1):(\d+)\b", own, text)

        def service(m):
            name = m.group(1)
            for suffix in SERVICE_SUFFIXES:
                if suffix and name.endswith(suffix):
                    name = name[:-len(suffix)]
            target = self.service_target(name, int(m.group(2)))
            if target is None:
                return m.group(0)
            target_pod, port = target
            if source is not None:
                self.edges.add((source.name, target_pod.name, port))
            return f"localhost:{target_pod.ports[port]}"
        text = re.sub(r"\b([a-z][a-z0-9.-]*):(\d+)\b", service, text)
        if not paths:
            return text
        # One pass, longest mount first: a host path must not be rewritten
        # again (it may contain a mountPath such as /tmp).
        mounts = self.mounts(pod)
        mounts[BINARY] = self.binary
        alternatives = "|".join(re.escape(m) for m in
                                sorted(mounts, key=len, reverse=True))
        return re.sub(r"(?<![\w/.-])(" + alternatives + r")(?=/|$|\s|\")",
                      lambda m: mounts[m.group(1)], text)

    def mounts(self, pod, c=None):
        out = {}
        for cont in ([c] if c else pod.spec.get("initContainers", []) +
                     pod.spec["containers"]):
            for m in cont.get("volumeMounts", []):
                check("subPath" not in m, f"{pod.name}: subPath unsupported")
                out[m["mountPath"]] = pod.volumes[m["name"]]
        return out

    def own(self, path, pod, mode, directory=False):
        """Ownership and mode as the kubelet leaves them: root, with group
        fsGroup and group read (or read-write for writable volumes) added
        when the pod has one."""
        if not self.as_root:
            return
        group = pod.fs_group if pod.fs_group is not None else 0
        if pod.fs_group is not None:
            mode |= 0o2070 if directory else 0o040
        os.chown(path, 0, group)
        os.chmod(path, mode)

    def materialise_volumes(self, pod):
        root = os.path.join(self.root, "pods", pod.name)
        claims = {t["metadata"]["name"]
                  for t in pod.workload["spec"].get("volumeClaimTemplates", [])}
        for claim in claims:
            pod.volumes[claim] = os.path.join(self.root, "pvc",
                                              f"{claim}-{pod.name}")
            os.makedirs(pod.volumes[claim], exist_ok=True)
            self.own(pod.volumes[claim], pod, 0o755, directory=True)
        for v in pod.spec["volumes"]:
            host = os.path.join(root, "volumes", v["name"])
            os.makedirs(host, exist_ok=True)
            os.chmod(os.path.join(root, "volumes"), 0o755)
            os.chmod(root, 0o755)
            os.chmod(os.path.join(self.root, "pods"), 0o755)
            pod.volumes[v["name"]] = host
            self.own(host, pod, 0o755, directory=True)
            if "configMap" in v:
                cm = by_name(self.docs, "ConfigMap", v["configMap"]["name"])
                for key, value in cm.get("data", {}).items():
                    # Addresses in config files resolve as cluster DNS would.
                    with open(os.path.join(host, key), "w") as f:
                        f.write(self.rewrite(value, pod, paths=False))
                    self.own(os.path.join(host, key), pod,
                             v["configMap"].get("defaultMode", 0o644))
            elif "secret" in v:
                secret = by_name(self.docs, "Secret", v["secret"]["secretName"])
                mode = v["secret"].get("defaultMode", 0o644)
                for key, value in secret.get("data", {}).items():
                    path = os.path.join(host, key)
                    with open(path, "wb") as f:
                        f.write(base64.b64decode(value))
                    os.chmod(path, mode)
                    self.own(path, pod, mode)
            elif "persistentVolumeClaim" in v:
                claim = v["persistentVolumeClaim"]["claimName"]
                by_name(self.docs, "PersistentVolumeClaim", claim)
                os.rmdir(host)
                pod.volumes[v["name"]] = os.path.join(self.root, "pvc", claim)
                os.makedirs(pod.volumes[v["name"]], exist_ok=True)
                self.own(pod.volumes[v["name"]], pod, 0o755, directory=True)
            else:
                check("emptyDir" in v,
                      f"{pod.name}: volume {v['name']}: unsupported kind")
                if self.as_root:
                    os.chmod(host, 0o777)  # the kubelet's emptyDir mode

    def environment(self, pod, c):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        # Not the pod's: a sanitizer build's own settings (scripts/
        # sanitize.sh), which the binary needs wherever it runs.
        for name in SANITIZER_SETTINGS:
            if name in os.environ:
                env[name] = os.environ[name]
        for e in c.get("env", []):
            if "value" in e:
                env[e["name"]] = e["value"]
                continue
            ref = e["valueFrom"]
            if "configMapKeyRef" in ref:
                cm = by_name(self.docs, "ConfigMap",
                             ref["configMapKeyRef"]["name"])
                env[e["name"]] = cm["data"][ref["configMapKeyRef"]["key"]]
            elif "secretKeyRef" in ref:
                s = by_name(self.docs, "Secret", ref["secretKeyRef"]["name"])
                env[e["name"]] = base64.b64decode(
                    s["data"][ref["secretKeyRef"]["key"]]).decode()
            elif "fieldRef" in ref:
                field = ref["fieldRef"]["fieldPath"]
                env[e["name"]] = {"metadata.name": pod.name,
                                  "metadata.namespace": NAMESPACE}[field]
            else:
                raise Failure(f"{pod.name}: env {e['name']}: unsupported")
        return env

    def command(self, pod, c, argv, env):
        # Kubernetes expands $(VAR) from the container's env ($$ escapes).
        def expand(arg):
            return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                          lambda m: "$" if m.group(0) == "$$"
                          else env.get(m.group(1), m.group(0)), arg)
        argv = [self.rewrite(expand(a), pod, source=pod) for a in argv]
        if not self.as_root:
            return argv
        groups = (f"--groups={pod.fs_group}" if pod.fs_group is not None
                  else "--clear-groups")
        return ["setpriv", f"--reuid={pod.uid}", f"--regid={pod.gid}",
                groups, "--"] + argv

    def probe(self, pod, c, probe):
        if "exec" in probe:
            argv = self.command(pod, c, probe["exec"]["command"],
                                self.environment(pod, c))
            return subprocess.run(argv, capture_output=True, cwd="/",
                                  timeout=30).returncode == 0
        get = probe["httpGet"]
        port = get["port"]
        if isinstance(port, str):
            port = pod.port_names[port]
        url = f"http://127.0.0.1:{pod.ports[port]}{get['path']}"
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return 200 <= r.status < 400
        except OSError:
            return False

    def start(self, pod):
        self.materialise_volumes(pod)
        logs = os.path.join(self.work, "logs")
        os.makedirs(logs, exist_ok=True)
        for c in pod.spec.get("initContainers", []):
            env = self.environment(pod, c)
            argv = self.command(pod, c, c["command"] + c.get("args", []), env)
            out = subprocess.run(argv, env=env, capture_output=True, text=True,
                                 cwd="/", timeout=600)
            check(out.returncode == 0,
                  f"{pod.name}: init container {c['name']} failed:\n"
                  f"{out.stderr}")
        for c in pod.spec["containers"]:
            env = self.environment(pod, c)
            argv = self.command(pod, c, c["command"] + c.get("args", []), env)
            log = open(os.path.join(logs, f"{pod.name}.{c['name']}.log"), "w")
            pod.processes.append((c, subprocess.Popen(
                argv, env=env, stdout=log, stderr=subprocess.STDOUT,
                cwd="/")))
        deadline = time.time() + 120
        for c, process in pod.processes:
            probe = c.get("readinessProbe")
            check(probe is not None, f"{pod.name}/{c['name']}: no readiness")
            while not self.probe(pod, c, probe):
                self.check_running(pod, c, process, logs)
                check(time.time() < deadline,
                      f"{pod.name}/{c['name']}: not ready in 120 s")
                time.sleep(0.5)
            # A probe can be answered by whatever took the node's port.
            self.check_running(pod, c, process, logs)
            if "livenessProbe" in c:
                check(self.probe(pod, c, c["livenessProbe"]),
                      f"{pod.name}/{c['name']}: liveness probe fails")
        print(f"  {pod.name}: ready")

    @staticmethod
    def check_running(pod, c, process, logs):
        """Fails if `process` (container `c` of `pod`) has exited; raises
        PortTaken if it exited because a port of its was taken."""
        if process.poll() is None:
            return
        with open(os.path.join(logs, f"{pod.name}.{c['name']}.log"),
                  errors="replace") as f:
            said = f.read()
        # The node's message when a bind fails (rpc/server.cc,
        # rpc/metrics.cc, prover/http_api.cc).
        taken = re.search(r"cannot listen on \S+", said)
        if taken:
            raise PortTaken(f"{pod.name}/{c['name']}: {taken.group(0)}")
        raise Failure(f"{pod.name}/{c['name']} exited {process.returncode}; "
                      f"see {logs}")

    def stop(self):
        for pod in reversed(self.pods):
            for c, process in pod.processes:
                if process.poll() is None:
                    process.send_signal(signal.SIGTERM)
        codes = {}
        for pod in reversed(self.pods):
            for c, process in pod.processes:
                try:
                    codes[pod.name] = process.wait(timeout=90)
                except subprocess.TimeoutExpired:
                    process.kill()
                    codes[pod.name] = "killed after 90 s"
        return codes

    def pod(self, component):
        found = [p for p in self.pods
                 if p.labels.get("app.kubernetes.io/component") == component]
        check(len(found) == 1, f"want one {component} pod")
        return found[0]


def metric(cluster, pod, port, name):
    """Sum of the samples of `name` at `pod`'s /metrics."""
    url = f"http://127.0.0.1:{pod.ports[port]}/metrics"
    with urllib.request.urlopen(url, timeout=5) as r:
        text = r.read().decode()
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def chat(cluster, site, binary, work):
    prover = cluster.pod("prover")
    settings = by_name(cluster.docs, "ConfigMap", "layerproof-settings")
    api_keys = json.load(open(os.path.join(site, "files", "api-keys.json")))
    key = next(iter(api_keys))
    ca = os.path.join(prover.volumes["tls"], "ca.crt")
    request = {"model": settings["data"]["served-model-name"],
               "messages": [{"role": "user", "content": "hello from k8s"}],
               "max_tokens": 8, "temperature": 0}
    port = cluster.service_target("layerproof-prover", 8443)[1]
    req = urllib.request.Request(
        f"https://localhost:{prover.ports[port]}/v1/chat/completions",
        data=json.dumps(request).encode(),
        headers={"Content-Type": "application/json",
                 "Authorization": f"Bearer {key}"})
    context = ssl.create_default_context(cafile=ca)
    with urllib.request.urlopen(req, context=context, timeout=60) as r:
        body = r.read()
        check(r.status == 200, f"chat: HTTP {r.status}")
    check("layerproof" in json.loads(body), "chat: no receipt")
    paths = {}
    for name, data in (("request.json", json.dumps(request).encode()),
                       ("response.json", body)):
        paths[name] = os.path.join(work, name)
        with open(paths[name], "wb") as f:
            f.write(data)
    verify = subprocess.run(
        [binary, "verify-receipt", paths["response.json"],
         "--prover-key", os.path.join(site, "files", "prover-1.pub"),
         "--log-key", os.path.join(site, "files", "verifier.pub"),
         "--openai-request", paths["request.json"],
         "--model", prover.volumes["model"]],
        capture_output=True, text=True)
    check(verify.returncode == 0,
          f"verify-receipt exit {verify.returncode}:\n{verify.stdout}"
          f"{verify.stderr}")
    print("  chat completion: receipt verified")

    # audit-rate 1: the request is audited by the auditor worker.
    verifier, auditor = cluster.pod("verifier"), cluster.pod("auditor")
    deadline = time.time() + 120
    while metric(cluster, verifier, 9100, "layerproof_verdicts_total") < 1:
        check(time.time() < deadline, "no verdict in 120 s")
        time.sleep(0.5)
    passed = metric(cluster, verifier, 9100,
                    'layerproof_verdicts_total{verdict="PASS"}')
    check(passed >= 1 and passed == metric(cluster, verifier, 9100,
                                           "layerproof_verdicts_total"),
          "the audit must PASS")
    check(metric(cluster, auditor, 9102,
                 "layerproof_auditor_audits_completed_total") >= 1,
          "the auditor worker, not the verifier, must have audited it")
    print("  audit: PASS, re-executed by the auditor worker")


# --- 3. NetworkPolicies -----------------------------------------------------

def allowed(docs, target, port, source_labels, source_namespace):
    """Whether the policies admit a connection to `target`'s `port`."""
    selecting = [p for p in objects(docs, "NetworkPolicy")
                 if p["spec"]["podSelector"].get("matchLabels", {}).items()
                 <= target.labels.items()
                 and "Ingress" in p["spec"].get("policyTypes", ["Ingress"])]
    if not selecting:
        return True
    names = {v: k for k, v in target.port_names.items()}
    for policy in selecting:
        for rule in policy["spec"].get("ingress", []):
            ports = rule.get("ports")
            if ports and not any(p["port"] in (port, names.get(port))
                                 for p in ports):
                continue
            peers = rule.get("from")
            if not peers:
                return True
            for peer in peers:
                pods = peer.get("podSelector")
                spaces = peer.get("namespaceSelector")
                ns_ok = (spaces is None and source_namespace == NAMESPACE) or (
                    spaces is not None and spaces.get("matchLabels", {}).items()
                    <= {"kubernetes.io/metadata.name":
                        source_namespace}.items())
                pod_ok = pods is None or (
                    source_labels is not None and
                    pods.get("matchLabels", {}).items() <= source_labels.items())
                if ns_ok and pod_ok:
                    return True
    return False


def check_network_policies(cluster):
    docs = cluster.docs
    pods = {p.name: p for p in cluster.pods}
    # The auditors open requests at the address the prover registry gives.
    registry = json.loads(by_name(docs, "ConfigMap", "layerproof-provers")
                          ["data"]["provers.json"])
    for prover in registry["provers"]:
        host, port = prover["opening_address"].rsplit(":", 1)
        target, target_port = cluster.service_target(host, int(port))
        cluster.edges.add((cluster.pod("auditor").name, target.name,
                           target_port))
    check(cluster.edges, "no connections recorded")
    for source, target, port in sorted(cluster.edges):
        check(allowed(docs, pods[target], port, pods[source].labels, NAMESPACE),
              f"NetworkPolicy refuses {source} -> {target}:{port}, which the "
              "deployment needs")
    verifier, prover = cluster.pod("verifier"), cluster.pod("prover")
    auditor = cluster.pod("auditor")
    outsider = {"app.kubernetes.io/name": "something-else"}
    must_refuse = [
        (prover, "opening", verifier), (prover, "opening", prover),
        (prover, "opening", None), (verifier, "submit", auditor),
        (verifier, "submit", None), (verifier, "audit-work", prover),
        (verifier, "audit-work", None), (verifier, "metrics", None),
    ]
    for target, port_name, source in must_refuse:
        labels = source.labels if source else outsider
        check(not allowed(docs, target, target.port_names[port_name], labels,
                          NAMESPACE),
              f"NetworkPolicy admits {source.name if source else 'a stranger'}"
              f" to {target.name}:{port_name}")
    for target, port_name in ((verifier, "grpc"), (prover, "grpc"),
                              (prover, "http")):
        check(allowed(docs, target, target.port_names[port_name], outsider,
                      "clients"),
              f"clients must reach {target.name}:{port_name}")
    check(allowed(docs, verifier, 9100, None, "monitoring"),
          "Prometheus (namespace monitoring) must reach the metrics")
    print(f"  NetworkPolicies: {len(cluster.edges)} connections admitted, "
          f"{len(must_refuse)} refusals hold")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--layerproof", required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    binary = os.path.abspath(args.layerproof)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    cluster = None
    root = None
    try:
        print("overlays:")
        check_overlays(args.repo)
        site = os.path.join(args.work, "site")
        subprocess.run(
            [os.path.join(args.repo, "deploy", "k8s", "new-site.sh"), site,
             "--layerproof", binary, "--audit-rate", "1", "--san",
             "localhost"], check=True, stdout=subprocess.DEVNULL)
        print("site on the cpu overlay, run locally:")
        if os.geteuid() != 0:
            print("  (not root: the processes run as this user, not the "
                  "pods' runAsUser)")
        docs = render(site)
        for attempt in range(1, SITE_STARTS + 1):
            root = tempfile.mkdtemp(prefix="lp-k8s-")
            cluster = LocalCluster(docs, binary, args.work, root)
            try:
                for component in ("verifier", "prover", "auditor"):
                    cluster.start(cluster.pod(component))
                break
            except PortTaken as e:
                if attempt == SITE_STARTS:
                    raise
                print(f"  {e}: taken since it was chosen; the site starts "
                      "again on fresh ports")
                cluster.stop()
                cluster = None
                shutil.rmtree(root, ignore_errors=True)
                root = None
        chat(cluster, site, binary, args.work)
        check_network_policies(cluster)
        codes = cluster.stop()
        cluster = None
        check(all(code == 0 for code in codes.values()),
              f"graceful shutdown: exit codes {codes}")
        print("  SIGTERM: every node exited 0")
    except (Failure, subprocess.SubprocessError, OSError, KeyError) as e:
        print(f"FAIL: {e}", file=sys.stderr)
        logs = os.path.join(args.work, "logs")
        if os.path.isdir(logs):
            for name in sorted(os.listdir(logs)):
                with open(os.path.join(logs, name)) as f:
                    tail = f.read()[-3000:]
                print(f"--- {name} (tail)\n{tail}", file=sys.stderr)
        return 1
    finally:
        if cluster is not None:
            cluster.stop()
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
