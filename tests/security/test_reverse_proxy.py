"""The reverse-proxy recipe of docs/webhook-receiver.md, run for real: Debian's nginx (`apt-get install -y nginx`;
.ci/run installs it) on 127.0.0.1 with the documented server block, TLS on a self-signed certificate this test
makes (the `cryptography` package), in front of the real receiver.

The config is read from the documentation's ```nginx block, so the recipe is what is tested; only the
deployment's names are replaced (port, certificate paths, the receiver's address, the log path) and the 10 s
timeouts are shortened to 1 s. Expected answers are nginx's documented ones for its directives (400 for
`large_client_header_buffers`, 413 for `client_max_body_size`, a closed connection for `client_body_timeout`)
and the recipe's own 404 for other methods. nginx runs in the foreground as one process (`master_process off`)
with its own prefix in tmp, and is always stopped.
"""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from harness.common import free_port
from tests.support.nginx_recipe import documented_block, running_nginx, self_signed, with_replacements
from tests.support.webhook_receiver import ServedReceiver, envelope, serving_receiver

DOC = Path(__file__).resolve().parents[2] / "docs" / "webhook-receiver.md"
SHORT_TIMEOUT_S = 1


def documented_recipe() -> str:
    """The ```nginx block of the documentation's "Behind a reverse proxy" section."""
    return documented_block(DOC, "## Behind a reverse proxy")


def rendered(recipe: str, *, port: int, cert: Path, key: Path, receiver_port: int, error_log: Path) -> str:
    """The recipe with this machine's names, each replacement checked to have happened once."""
    return with_replacements(recipe, [
        (r"listen 443 ssl;", f"listen 127.0.0.1:{port} ssl;"),
        (r"ssl_certificate /etc/ssl/certs/hooks\.example\.com\.pem;", f"ssl_certificate {cert};"),
        (r"ssl_certificate_key /etc/ssl/private/hooks\.example\.com\.key;", f"ssl_certificate_key {key};"),
        (r"server 127\.0\.0\.1:8787;", f"server 127.0.0.1:{receiver_port};"),
        (r"error_log /var/log/nginx/invoicing-hooks\.error\.log crit;", f"error_log {error_log} crit;"),
        (r"client_header_timeout 10s;", f"client_header_timeout {SHORT_TIMEOUT_S}s;"),
        (r"client_body_timeout 10s;", f"client_body_timeout {SHORT_TIMEOUT_S}s;"),
    ])


@pytest.fixture
def proxied(tmp_path) -> Iterator[tuple[ServedReceiver, str, ssl.SSLContext, Path]]:
    """The receiver, and nginx in front of it with the documented recipe; (receiver, https base, TLS context
    trusting the test's certificate, nginx's prefix). nginx is stopped whatever happens."""
    prefix = tmp_path / "nginx"
    (prefix / "logs").mkdir(parents=True)
    cert, key = self_signed(prefix)
    port = free_port()
    with serving_receiver(tmp_path) as served:
        receiver_port = int(served.base.rsplit(":", 1)[1])
        site = rendered(documented_recipe(), port=port, cert=cert, key=key, receiver_port=receiver_port,
                        error_log=prefix / "logs" / "hooks.error.log")
        with running_nginx(prefix, site, port):
            context = ssl.create_default_context(cafile=str(cert))
            yield served, f"https://127.0.0.1:{port}", context, prefix


def _half_sent(base: str, context: ssl.SSLContext, path: str) -> tuple[bytes, float]:
    """A request whose body stops after a few bytes; (what nginx answered before closing, seconds it took)."""
    started = time.monotonic()
    port = int(base.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, \
            context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        tls.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    f"Content-Length: 400\r\n\r\n{{\"id\": \"half".encode())
        answer = b""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                chunk = tls.recv(65536)
            except (ConnectionResetError, TimeoutError, ssl.SSLError):
                break
            if not chunk:
                break
            answer += chunk
    return answer, time.monotonic() - started


def test_the_documented_nginx_recipe_passes_a_delivery_and_refuses_oversized_and_slow_ones(proxied):
    served, base, context, prefix = proxied
    path = served.path()
    with httpx.Client(verify=context, timeout=30.0, trust_env=False) as https:
        genuine = https.post(base + path, json=envelope("through-nginx", "customer.updated"))
        big_header = https.post(base + path, json=envelope("big-header"), headers={"X-Filler": "a" * 16_384})
        big_body = https.post(base + path, json=envelope("big-body", data={"id": "x", "pad": "p" * 300_000}))
        other_method = https.get(base + path)
    assert (genuine.status_code, genuine.json()) == (200, {"status": "spooled"})
    assert big_header.status_code == 400
    assert big_body.status_code == 413
    assert other_method.status_code == 404
    answer, seconds = _half_sent(base, context, path)
    # nginx answers 408 to a body not sent within client_body_timeout, or just closes: either way, soon
    assert answer == b"" or answer.startswith(b"HTTP/1.1 408"), answer[:80]
    assert SHORT_TIMEOUT_S * 0.8 <= seconds < SHORT_TIMEOUT_S + 5, seconds  # it waited for the timeout, no more
    # only the genuine delivery reached the receiver and its spool
    assert [(h.resource, h.record_id) for h in served.pending()] == [("customers", "0123456789abcdef01234567")]
    assert dict(served.receiver.counts) == {"spooled": 1}
    logs = "".join(log.read_text(errors="replace") for log in (prefix / "logs").glob("*.log"))
    assert served.token not in logs
