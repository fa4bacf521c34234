"""Which URLs the product sends a secret to: `https://` anywhere, plain `http://` only to this machine.

The API's base URL receives the client id and secret (HTTP Basic on the token request) and then the bearer
token; a webhook subscription's URL carries the receiver's path token to the service, which delivers to it.
Over plain HTTP anyone on the path reads them. Loopback (`127.0.0.0/8`, `localhost`, `[::1]`) stays allowed
in clear: the sandbox and the tests serve there, and the traffic never leaves the machine. A URL holding a
user name or password (`https://user:pw@host`) is refused too: the secret would sit in every log of the URL.
Every door that takes a base URL (the portals file, dlt's settings and the environment, the Dagster
resource) and `webhooks register` ask `url_problem` before anything is sent.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

LOOPBACK_NAMES = frozenset({"localhost"})


def is_loopback_host(host: str) -> bool:
    """Whether `host` (a name or an address, IPv6 without brackets) is this machine only."""
    host = host.strip().lower().rstrip(".")
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def url_problem(url: str) -> str | None:
    """Why secrets must not be sent to `url` (None when they may); the message never repeats a password."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
        parts.port  # noqa: B018  # raises ValueError on a port that is not a number
    except ValueError:
        return "is not a valid URL"
    if parts.scheme not in ("http", "https") or not host:
        return "must be an https:// URL with a host (e.g. https://api.infast.fr/api/v2)"
    if parts.username is not None or parts.password is not None:
        return "must not hold a user name or password (credentials go in their own settings)"
    if parts.scheme == "http" and not is_loopback_host(host):
        return (f"uses plain http:// to {host}, which would send the credentials in clear; use https:// "
                f"(plain http is allowed only for 127.0.0.1, localhost or [::1])")
    return None


def shown(url: str) -> str:
    """`url` fit for a message: scheme, host, port and path, without any user name or password."""
    try:
        parts = urlsplit(url.strip())
        netloc = parts.netloc.rpartition("@")[2]
    except ValueError:
        return "<unparsable URL>"
    return f"{parts.scheme}://{netloc}{parts.path}" if parts.scheme else "<URL without scheme>"
