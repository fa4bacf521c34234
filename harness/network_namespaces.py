"""Two network namespaces as two hosts with two addresses, for the tests of the budget per egress IP.

Each namespace gets one end of a veth pair, the other end staying in the root namespace:

    root: <prefix>.1.1/24 (veth a0)  <->  namespace A: <prefix>.1.2/24 (veth a1), default route via .1.1
    root: <prefix>.2.1/24 (veth b0)  <->  namespace B: <prefix>.2.2/24 (veth b1), default route via .2.1

A server bound to `<prefix>.1.1` in the root namespace is reached from A directly and from B through its default
route (the root namespace takes a packet for any of its own addresses), and sees A's requests come from .1.2 and
B's from .2.2: two source addresses, as two hosts with their own public addresses. The addresses are private,
on virtual links only: nothing leaves the machine. Needs root (`ip netns`); `close` removes everything.

Adding them changes the machine's network, and a Chromium running meanwhile fails every request it has in flight
(net::ERR_NETWORK_CHANGED): a test using them is marked `changes_network`, which scripts/test runs when no browser
test runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Self

# `ip netns exec NS` reads /etc/netns/NS/resolv.conf in place of /etc/resolv.conf: one naming no server makes a
# name lookup inside fail at once, where the machine's resolver, unreachable from the namespace, would make every
# lookup wait for its timeouts (a sync's exit took 37 s more there)
NETNS_ETC = Path("/etc/netns")


class NamespacesUnavailable(RuntimeError):
    """`ip netns` cannot be used here (not root, no iproute2, no network namespaces in the kernel)."""


class TwoHosts:
    """Namespaces `names[0]`, `names[1]` with the addresses `addresses[0]`, `addresses[1]`; `server_address` is
    the root namespace's address both reach."""

    def __init__(self) -> None:
        tag = f"{os.getpid() % 10000:04d}"
        second = 100 + os.getpid() % 150  # a /16 of 10.x unlikely to be in use, from the pid
        self.names = (f"ivwa{tag}", f"ivwb{tag}")
        self._links = (f"ivwa{tag}0", f"ivwb{tag}0")
        self.server_address = f"10.{second}.1.1"
        self.addresses = (f"10.{second}.1.2", f"10.{second}.2.2")
        self._gateways = (f"10.{second}.1.1", f"10.{second}.2.1")
        self._made: list[str] = []

    def open(self) -> Self:
        """Creates both namespaces, links and routes; NamespacesUnavailable when the machine cannot."""
        if os.geteuid() != 0:
            raise NamespacesUnavailable("network namespaces need root (`ip netns add`)")
        try:
            for name, link, address, gateway in zip(self.names, self._links, self.addresses, self._gateways,
                                                    strict=True):
                inner = link[:-1] + "1"
                _ip("netns", "add", name)
                self._made.append(name)
                (NETNS_ETC / name).mkdir(parents=True, exist_ok=True)
                (NETNS_ETC / name / "resolv.conf").write_text("# no name server: this namespace reaches no resolver\n")
                _ip("link", "add", link, "type", "veth", "peer", "name", inner)
                _ip("link", "set", inner, "netns", name)
                _ip("addr", "add", f"{gateway}/24", "dev", link)
                _ip("link", "set", link, "up")
                _ip("-n", name, "addr", "add", f"{address}/24", "dev", inner)
                _ip("-n", name, "link", "set", inner, "up")
                _ip("-n", name, "link", "set", "lo", "up")
                _ip("-n", name, "route", "add", "default", "via", gateway)
        except (OSError, subprocess.CalledProcessError) as error:
            self.close()
            detail = error.stderr.strip() if isinstance(error, subprocess.CalledProcessError) else str(error)
            raise NamespacesUnavailable(f"cannot set up network namespaces: {detail}") from None
        return self

    def close(self) -> None:
        """Deletes the namespaces (their veth ends, and so the pairs, go with them); safe to call twice."""
        for link in self._links:
            subprocess.run(["ip", "link", "del", link], capture_output=True, check=False, timeout=30)
        for name in self._made:
            subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False, timeout=30)
            shutil.rmtree(NETNS_ETC / name, ignore_errors=True)
        self._made.clear()

    def __enter__(self) -> Self:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], capture_output=True, text=True, check=True, timeout=30)
