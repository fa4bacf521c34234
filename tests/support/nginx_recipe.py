"""A documented nginx recipe, run for real: Debian's nginx (`apt-get install -y nginx`; .ci/run installs it) on
127.0.0.1, in the foreground as one process (`master_process off`) with its own prefix, TLS on a self-signed
certificate made here (the `cryptography` package); always stopped. Used by the receiver's recipe
(tests/security/test_reverse_proxy.py) and the dashboard's sign-in (tests/security/test_dashboard_sign_in.py)."""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from harness.common import wait_until

NGINX = Path("/usr/sbin/nginx")


def documented_block(doc: Path, section: str) -> str:
    """The ```nginx block of `doc` under the heading that starts with `section`."""
    text = doc.read_text(encoding="utf-8")
    assert section in text, f"{doc.name} has no section {section!r}"
    match = re.search(r"```nginx\n(.*?)```", text[text.index(section):], re.DOTALL)
    assert match, f"{doc.name} has no ```nginx block under {section!r}"
    return match.group(1)


def with_replacements(recipe: str, replacements: list[tuple[str, str]]) -> str:
    """The recipe with this machine's names (pattern, replacement), each checked to have happened once."""
    for pattern, replacement in replacements:
        recipe, count = re.subn(pattern, replacement, recipe)
        assert count == 1, f"the recipe no longer holds {pattern!r}"
    return recipe


def self_signed(folder: Path) -> tuple[Path, Path]:
    """(certificate, key) files of a self-signed certificate for 127.0.0.1, valid a day."""
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


@contextlib.contextmanager
def running_nginx(prefix: Path, site: str, port: int, http_options: str = "") -> Iterator[None]:
    """nginx with `site` (a server block) under `prefix` until the block ends, once it listens on `port`."""
    if not NGINX.exists():
        pytest.fail(f"{NGINX} not found: install Debian's nginx with `apt-get install -y nginx`")
    (prefix / "logs").mkdir(parents=True, exist_ok=True)
    (prefix / "site.conf").write_text(site)
    temp = " ".join(f"{kind}_temp_path {prefix / kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi",
                                                                      "scgi"))
    (prefix / "nginx.conf").write_text(
        f"daemon off;\nmaster_process off;\npid {prefix / 'nginx.pid'};\nerror_log {prefix / 'logs/error.log'} crit;\n"
        f"events {{ worker_connections 64; }}\nhttp {{ {http_options} {temp} include {prefix / 'site.conf'}; }}\n")
    process = subprocess.Popen([str(NGINX), "-p", str(prefix), "-c", str(prefix / "nginx.conf")],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        assert wait_until(lambda: listening(port) or process.poll() is not None, timeout_s=15)
        assert process.poll() is None, process.stdout.read().decode() if process.stdout else ""
        yield
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        assert process.returncode is not None


def listening(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:`port`."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False
