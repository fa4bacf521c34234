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

import datetime
import ipaddress
import re
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from harness.common import free_port, wait_until
from tests.support.webhook_receiver import ServedReceiver, envelope, serving_receiver

NGINX = Path("/usr/sbin/nginx")
DOC = Path(__file__).resolve().parents[2] / "docs" / "webhook-receiver.md"
SHORT_TIMEOUT_S = 1


def documented_recipe() -> str:
    """The ```nginx block of the documentation's "Behind a reverse proxy" section."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Behind a reverse proxy"):]
    match = re.search(r"```nginx\n(.*?)```", section, re.DOTALL)
    assert match, "docs/webhook-receiver.md has no ```nginx block under 'Behind a reverse proxy'"
    return match.group(1)


def _self_signed(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                  critical=False)
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def rendered(recipe: str, *, port: int, cert: Path, key: Path, receiver_port: int, error_log: Path) -> str:
    """The recipe with this machine's names, each replacement checked to have happened once."""
    replacements = [
        (r"listen 443 ssl;", f"listen 127.0.0.1:{port} ssl;"),
        (r"ssl_certificate /etc/ssl/certs/hooks\.example\.com\.pem;", f"ssl_certificate {cert};"),
        (r"ssl_certificate_key /etc/ssl/private/hooks\.example\.com\.key;", f"ssl_certificate_key {key};"),
        (r"server 127\.0\.0\.1:8787;", f"server 127.0.0.1:{receiver_port};"),
        (r"error_log /var/log/nginx/invoicing-hooks\.error\.log crit;", f"error_log {error_log} crit;"),
        (r"client_header_timeout 10s;", f"client_header_timeout {SHORT_TIMEOUT_S}s;"),
        (r"client_body_timeout 10s;", f"client_body_timeout {SHORT_TIMEOUT_S}s;"),
    ]
    for pattern, replacement in replacements:
        recipe, count = re.subn(pattern, replacement, recipe)
        assert count == 1, f"the recipe no longer holds {pattern!r}"
    return recipe


@pytest.fixture
def proxied(tmp_path) -> Iterator[tuple[ServedReceiver, str, ssl.SSLContext, Path]]:
    """The receiver, and nginx in front of it with the documented recipe; (receiver, https base, TLS context
    trusting the test's certificate, nginx's prefix). nginx is stopped whatever happens."""
    if not NGINX.exists():
        pytest.fail(f"{NGINX} not found: install Debian's nginx with `apt-get install -y nginx`")
    prefix = tmp_path / "nginx"
    (prefix / "logs").mkdir(parents=True)
    cert, key = _self_signed(prefix)
    port = free_port()
    with serving_receiver(tmp_path) as served:
        receiver_port = int(served.base.rsplit(":", 1)[1])
        site = rendered(documented_recipe(), port=port, cert=cert, key=key, receiver_port=receiver_port,
                        error_log=prefix / "logs" / "hooks.error.log")
        (prefix / "site.conf").write_text(site)
        temp = " ".join(f"{kind}_temp_path {prefix / kind};" for kind in ("client_body", "proxy", "fastcgi",
                                                                          "uwsgi", "scgi"))
        (prefix / "nginx.conf").write_text(
            f"daemon off;\nmaster_process off;\npid {prefix / 'nginx.pid'};\nerror_log {prefix / 'logs/error.log'} crit;\n"
            f"events {{ worker_connections 64; }}\nhttp {{ {temp} include {prefix / 'site.conf'}; }}\n")
        process = subprocess.Popen([str(NGINX), "-p", str(prefix), "-c", str(prefix / "nginx.conf")],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            assert wait_until(lambda: _listening(port) or process.poll() is not None, timeout_s=15)
            assert process.poll() is None, process.stdout.read().decode() if process.stdout else ""
            context = ssl.create_default_context(cafile=str(cert))
            yield served, f"https://127.0.0.1:{port}", context, prefix
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
            assert process.returncode is not None


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


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
