"""`invoicing-warehouse dashboard`: the finance dashboard (Streamlit) over the readers' copy of a warehouse.

It becomes `streamlit run` on invoicing_warehouse/dashboard/app.py with a warm-up beside the server
(`invoicing_warehouse.dashboard.serve`; exec: one process, which a signal stops), bound to 127.0.0.1 unless told
otherwise, and returns its exit code. The dashboard reads only the readers' copy (`<warehouse>.read.duckdb`), so it
never blocks a sync or a model build.
"""

from __future__ import annotations

import argparse
import importlib.util
import ipaddress
import os
import socket
import sys
from pathlib import Path

from invoicing_warehouse.engine.names import DEFAULT_WAREHOUSE_PATH

DEFAULT_PORT = 8501
DEFAULT_HOST = "127.0.0.1"
# the names this machine answers to itself: always allowed in Host (the browser on the same machine)
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
WILDCARD_HOSTS = ("0.0.0.0", "::", "")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declares `--warehouse`, `--port` and `--host`."""
    parser.add_argument(
        "--warehouse",
        type=Path,
        default=Path(DEFAULT_WAREHOUSE_PATH),
        metavar="PATH",
        help=f"warehouse whose readers' copy to show (default: {DEFAULT_WAREHOUSE_PATH})",
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (default: %(default)s)")
    parser.add_argument(
        "--host", default=DEFAULT_HOST, help="address to bind (default: %(default)s, this machine only)"
    )
    parser.add_argument(
        "--allowed-host", action="append", default=[], metavar="NAME",
        help="another host name browsers use to reach the dashboard (repeatable; e.g. dashboard.internal); "
             "requests naming any other host are refused (DNS rebinding)",
    )


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host.lower() == "localhost"


def allowed_hosts(host: str, extra: list[str]) -> list[str]:
    """The names a request's `Host` may carry: loopback always, `--host` itself (bound to one address), this
    machine's names when bound to every address (`0.0.0.0`, `::`), and `extra` (`--allowed-host`)."""
    names = list(LOOPBACK_HOSTS)
    if host in WILDCARD_HOSTS:
        names += [socket.gethostname(), socket.getfqdn()]
    else:
        names.append(host.strip("[]"))
    names += [name.strip() for name in extra]
    return list(dict.fromkeys(name.lower() for name in names if name))


def streamlit_command(warehouse: Path, port: int, host: str, extra_hosts: list[str] | None = None) -> list[str]:
    """The command line of the dashboard: `invoicing_warehouse.dashboard.serve` with the arguments of `streamlit run`;
    Streamlit's `server.allowedHosts` holds `allowed_hosts(host, extra_hosts)`
    (invoicing_warehouse/dashboard/host_guard.py enforces it on every request)."""
    spec = importlib.util.find_spec("invoicing_warehouse.dashboard.app")  # its file, without importing Streamlit here
    assert spec is not None and spec.origin is not None, "the dashboard package is not installed"
    hosts = [argument for name in allowed_hosts(host, extra_hosts or []) for argument in
             ("--server.allowedHosts", name)]
    return [
        sys.executable, "-m", "invoicing_warehouse.dashboard.serve", spec.origin,
        "--server.address", host,
        "--server.port", str(port),
        *hosts,
        "--server.enableCORS", "true",
        "--server.enableXsrfProtection", "true",
        "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
        "--client.toolbarMode", "viewer",
        "--", "--warehouse", str(warehouse.resolve()),
    ]


def run(args: argparse.Namespace) -> int:
    """Replaces this process by Streamlit's (so a signal to it reaches the server); returns only on error."""
    command = streamlit_command(args.warehouse, args.port, args.host, args.allowed_host)
    if not _is_loopback(args.host):
        print(f"warning: listening on {args.host}, reachable from other machines; the dashboard has no "
              f"authentication (answers only for: {', '.join(allowed_hosts(args.host, args.allowed_host))})",
              file=sys.stderr)
    print(f"dashboard of {args.warehouse} on http://{args.host}:{args.port} (Ctrl+C to stop)", flush=True)
    os.execv(command[0], command)
    return 1  # not reached: execv raises OSError or never returns
