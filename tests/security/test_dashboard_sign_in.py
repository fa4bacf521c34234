"""The dashboard's sign-in recipe of docs/dashboard-sign-in.md, run for real (security review 2, M4): Debian's nginx
on 127.0.0.1 with the documented server block, TLS on a self-signed certificate this test makes, basic auth with a
password file made here by `openssl passwd -apr1` (as the page says), in front of the real dashboard process.

The config is read from the page's ```nginx block, so the recipe is what is tested; only the deployment's names
are replaced (port, certificate paths, the dashboard's address, the password file). Expected answers are nginx's
documented ones for `auth_basic` (401 without or with wrong credentials) and Streamlit's own through the proxy
(its page, its health check's "ok", 101 for its WebSocket). nginx runs in the foreground as one process with its
own prefix in tmp, and is always stopped; so is the dashboard.
"""

from __future__ import annotations

import base64
import os
import socket
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from harness.common import free_port
from harness.dashboard_process import dashboard_process
from tests.support.nginx_recipe import documented_block, running_nginx, self_signed, with_replacements

DOC = Path(__file__).resolve().parents[2] / "docs" / "dashboard-sign-in.md"
USER, PASSWORD = "accountant", "a-long-password-for-the-test"
WAIT_S = 30.0


def rendered(recipe: str, *, port: int, cert: Path, key: Path, dashboard_port: int, users: Path) -> str:
    """The recipe with this machine's names, each replacement checked to have happened once."""
    return with_replacements(recipe, [
        (r"listen 443 ssl;", f"listen 127.0.0.1:{port} ssl;"),
        (r"ssl_certificate /etc/ssl/certs/dashboard\.example\.com\.pem;", f"ssl_certificate {cert};"),
        (r"ssl_certificate_key /etc/ssl/private/dashboard\.example\.com\.key;", f"ssl_certificate_key {key};"),
        (r"server 127\.0\.0\.1:8501;", f"server 127.0.0.1:{dashboard_port};"),
        (r"auth_basic_user_file /etc/nginx/invoicing-dashboard\.htpasswd;", f"auth_basic_user_file {users};"),
    ])


@pytest.fixture(scope="module")
def signed_in_dashboard(tmp_path_factory) -> Iterator[tuple[str, ssl.SSLContext]]:
    """The dashboard, and nginx in front of it with the documented recipe; (https base, TLS context trusting the
    test's certificate). Both stopped whatever happens."""
    assert DOC.exists(), "docs/dashboard-sign-in.md, the dashboard's sign-in recipe, is missing"
    folder = tmp_path_factory.mktemp("dashboard-sign-in")
    prefix = folder / "nginx"
    prefix.mkdir()
    cert, key = self_signed(prefix)
    hashed = subprocess.run(["openssl", "passwd", "-apr1", "-stdin"], input=PASSWORD, capture_output=True,
                            text=True, timeout=30, check=True).stdout.strip()
    users = prefix / "users.htpasswd"
    users.write_text(f"{USER}:{hashed}\n")
    port = free_port()
    # the figures do not matter to the door: a warehouse never built (the page says what to run)
    with dashboard_process(folder / "warehouse.duckdb", folder / "dashboard.log") as dashboard_url:
        site = rendered(documented_block(DOC, "## Behind nginx"), port=port, cert=cert, key=key,
                        dashboard_port=int(dashboard_url.rsplit(":", 1)[1]), users=users)
        with running_nginx(prefix, site, port, http_options="access_log off;"):
            yield f"https://127.0.0.1:{port}", ssl.create_default_context(cafile=str(cert))


def _websocket_status(base: str, context: ssl.SSLContext, authorization: str | None) -> str:
    """The status code nginx answers to an upgrade of Streamlit's stream, through TLS."""
    port = int(base.rsplit(":", 1)[1])
    key = base64.b64encode(os.urandom(16)).decode()
    head = (f"GET /_stcore/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nOrigin: https://127.0.0.1\r\n")
    if authorization:
        head += f"Authorization: {authorization}\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT_S) as raw, \
            context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        tls.sendall((head + "\r\n").encode())
        return tls.recv(4096).split(b"\r\n", 1)[0].decode().split(" ")[1]


def test_the_documented_recipe_asks_everyone_to_sign_in_and_serves_the_dashboard_to_a_user(signed_in_dashboard):
    base, context = signed_in_dashboard
    good = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    wrong = "Basic " + base64.b64encode(f"{USER}:not-the-password".encode()).decode()
    with httpx.Client(verify=context, timeout=WAIT_S, trust_env=False) as https:
        strangers = [https.get(base + path, headers=headers).status_code
                     for path in ("/", "/_stcore/health", "/static/../") for headers in ({}, {"Authorization": wrong})]
        page = https.get(base + "/", headers={"Authorization": good})
        health = https.get(base + "/_stcore/health", headers={"Authorization": good})
    assert strangers == [401] * 6
    assert [_websocket_status(base, context, auth) for auth in (None, wrong)] == ["401", "401"]
    assert page.status_code == 200 and "<html" in page.text.lower()
    assert (health.status_code, health.text) == (200, "ok")
    assert _websocket_status(base, context, good) == "101"  # the figures' stream passes the proxy once signed in
