"""A TCP forwarder from 127.0.0.1:PORT to another address: run inside a network namespace, it lets a process there
reach a server of the root namespace by a loopback URL (the product sends credentials over plain http:// only
to loopback, url_policy.py), while the server still sees the namespace's own address as the source.

    ip netns exec NS python -m harness.loopback_forwarder PORT TARGET_HOST TARGET_PORT

Prints `listening` once bound; runs until killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(ConnectionError, OSError):
            writer.close()


async def _serve(port: int, target_host: str, target_port: int) -> None:
    async def forward(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        try:
            server_reader, server_writer = await asyncio.open_connection(target_host, target_port)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(_pipe(client_reader, server_writer), _pipe(server_reader, client_writer))

    server = await asyncio.start_server(forward, "127.0.0.1", port)
    print("listening", flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    port, target_host, target_port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    asyncio.run(_serve(port, target_host, target_port))


if __name__ == "__main__":
    main()
