"""Loopback ports for the processes a test or the soak starts itself.

Such a harness has to choose its nodes' ports before it starts them (each
node is told the others' addresses, and the soak restarts a node in place),
so a port is chosen free, released, and bound by the node later. In
between, anything else on the machine can take it.

free_port draws from below the kernel's ephemeral range
(/proc/sys/net/ipv4/ip_local_port_range): every port the kernel picks
itself comes from that range, both a bind to port 0 (how parallel tests get
their ports) and the local end of every outgoing connection (the harness's
own probes, clients and node-to-node calls included). Below the range only
a process that picks ports by hand can take one in between; the harness
then sees the node fail with "cannot listen on" and decides what to do
(tests/deploy/k8s_manifests_test.py starts its site again).
"""
import random
import socket

# The lowest port handed out; the ports below are left to the services of
# the machine the harness runs on.
LOWEST_PORT = 20000
DRAWS = 1000


def ephemeral_range():
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        low, high = f.read().split()
    return int(low), int(high)


def free_port(handed_out):
    """A loopback port that nothing is bound to now and that is not in
    `handed_out` (the ports the caller holds for its nodes; it is added).
    Raises OSError if none is found in DRAWS draws."""
    ephemeral_low, _ = ephemeral_range()
    for _ in range(DRAWS):
        if ephemeral_low - 1 > LOWEST_PORT:
            port = random.randrange(LOWEST_PORT, ephemeral_low)
        else:  # an unusual range: let the kernel choose
            port = 0
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            port = s.getsockname()[1]
        if port not in handed_out:
            handed_out.add(port)
            return port
    raise OSError(f"no free loopback port found in {DRAWS} draws")
