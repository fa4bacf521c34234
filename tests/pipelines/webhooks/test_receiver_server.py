"""The receiver's server bounds (receiver_server.py) beyond the attack rows: a connection over the cap is closed
before a byte is read, a kept-alive connection that starts a second request and stalls is dropped too, and
once the stalled connections are gone a delivery is answered again. Limits are made small here; the expected
behaviour is the module's table."""

from __future__ import annotations

import socket
import time

import httpx

from pipelines.invoicing.webhooks.receiver_server import ServerLimits
from tests.support.webhook_receiver import envelope, serving_receiver

LIMITS = ServerLimits(request_read_timeout_s=1.0, max_connections=3)


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=5)


def _closed_within(connection: socket.socket, seconds: float) -> bool:
    """Whether the server closed `connection` (EOF or reset) within `seconds` (bounded)."""
    connection.settimeout(seconds)
    try:
        return connection.recv(1024) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_connections_over_the_cap_are_closed_and_stalled_ones_dropped(tmp_path):
    with serving_receiver(tmp_path, limits=LIMITS) as served:
        port = int(served.base.rsplit(":", 1)[1])
        held = [_connect(port) for _ in range(3)]
        try:
            extra = _connect(port)
            assert _closed_within(extra, 2.0)  # the fourth: closed at once
            extra.close()
            assert not _closed_within(held[0], 0.3)  # the first three are kept (for now)
            started = time.monotonic()
            # silent: dropped 1 s after they connected (5 s: room for a loaded machine, well under "never")
            assert all(_closed_within(connection, 5.0) for connection in held)
            assert time.monotonic() - started < 5.0
        finally:
            for connection in held:
                connection.close()
        path = served.path().encode()
        with _connect(port) as kept_alive:
            body = httpx.Request("POST", "http://x", json=envelope("first")).read()
            kept_alive.sendall(b"POST " + path + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                               b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            kept_alive.settimeout(5)
            assert kept_alive.recv(1024).startswith(b"HTTP/1.1 200")
            kept_alive.sendall(b"POST " + path + b" HTTP/1.1\r\nHost: x\r\n")  # a second request, half-sent
            assert _closed_within(kept_alive, 5.0)
        with httpx.Client(timeout=10, trust_env=False) as http:
            assert http.post(served.url(), json=envelope("after", record_id="abc")).status_code == 200
    assert sorted(h.record_id for h in served.pending()) == ["0123456789abcdef01234567", "abc"]


def test_a_head_is_measured_whole_whatever_the_reads_and_a_body_never_counts(tmp_path):
    """A genuine delivery split at every byte around its head's end is answered 200 (the end straddling two
    reads is found); a 20 KiB header in one read, or in 1 KiB pieces, gets 431 (receiver_server's table)."""
    with serving_receiver(tmp_path, limits=ServerLimits(max_header_bytes=4096)) as served:
        port = int(served.base.rsplit(":", 1)[1])
        body = httpx.Request("POST", "http://x", json=envelope("split", data={"id": "s1", "pad": "p" * 8000})).read()
        head = (f"POST {served.path()} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        for cut in range(len(head) - 5, len(head) + 2):
            with _connect(port) as connection:
                request = head + body
                connection.sendall(request[:cut])
                time.sleep(0.01)  # two reads on the server's side
                connection.sendall(request[cut:])
                assert connection.recv(1024).startswith(b"HTTP/1.1 200"), cut
        big = b"POST /hooks/x HTTP/1.1\r\nHost: x\r\nX-Filler: " + b"a" * 20_000 + b"\r\n\r\n"
        for pieces in ([big], [big[n:n + 1024] for n in range(0, len(big), 1024)]):
            with _connect(port) as connection:
                try:
                    for piece in pieces:
                        connection.sendall(piece)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # refused while sending: the answer is already there
                assert connection.recv(1024).startswith(b"HTTP/1.1 431")
    assert [h.record_id for h in served.pending()] == ["s1"]
