"""Which egress this process's requests to an API host leave by: what one rate budget covers across hosts.

The service counts 10 requests/s per source IP as IT sees it, so the budget shared in PostgreSQL
(`database_budget.py`) is keyed by the egress, not by the machine:

- `INVOICING_EGRESS_IP`, when set: the egress's public address, or any name the hosts behind it agree on
  (`nat-paris-1`). Behind a NAT (a cloud NAT gateway, an office router) every host sees its own private
  address while the service sees the NAT's one: the operator MUST set the same value on every host behind it,
  or each host would believe it owns 10 requests/s.
- Otherwise, the address this machine would send from towards the API host: a UDP socket `connect`ed to the
  host's address (no packet is sent: a UDP connect only picks the route and the source address) and its
  `getsockname`. Right when each host's own address is what the service sees (hosts with public addresses, or
  one network namespace per address as in the tests); wrong behind a NAT, hence the setting above.

A host that cannot be resolved or routed gives `unrouted`: the budget is still shared with every process of the
same database that cannot route either, and the request itself will fail with its own error.
"""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

from invoicing_warehouse.engine.environment.api_settings import EGRESS_IP
from invoicing_warehouse.engine.environment.reader import environment

EGRESS_ENV = EGRESS_IP.name
UNROUTED = "unrouted"
MAX_EGRESS_CHARS = 200
DEFAULT_PORTS = {"http": 80, "https": 443}


def egress_for(base_url: str, environ: dict[str, str] | None = None) -> str:
    """The egress of requests to `base_url`: `INVOICING_EGRESS_IP` when set, else the source address the
    routing table picks towards the API host (see the module's doc). ValueError for an over-long setting."""
    named = environment(environ).text(EGRESS_IP)
    if named:
        if len(named) > MAX_EGRESS_CHARS or not named.isprintable():
            raise ValueError(f"{EGRESS_ENV} must be an address or a short printable name")
        return named
    return source_address_towards(base_url)


def source_address_towards(base_url: str) -> str:
    """The local address the kernel would send from to the host of `base_url` (UDP connect, no packet)."""
    parts = urlsplit(base_url)
    if not parts.hostname:
        return UNROUTED
    port = parts.port or DEFAULT_PORTS.get(parts.scheme, 443)
    try:
        candidates = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_DGRAM)
    except OSError:
        return UNROUTED
    for family, kind, proto, _, address in candidates:
        try:
            with socket.socket(family, kind, proto) as probe:
                probe.connect(address)
                return str(probe.getsockname()[0])
        except OSError:
            continue  # no route for this family (an IPv6 address on an IPv4-only host): try the next
    return UNROUTED
