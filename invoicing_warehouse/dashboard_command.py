"""`invoicing-warehouse dashboard`: the finance dashboard (Streamlit) over the readers' copy of a warehouse.

It becomes `streamlit run` on dashboard/app.py with a warm-up beside the server (`dashboard.serve`; exec:
one process, which a signal stops), bound to 127.0.0.1 unless told otherwise, and returns its exit code.
The dashboard reads only the readers' copy (`<warehouse>.read.duckdb`), so it never blocks a sync or a
model build.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

from warehouse_engine.names import DEFAULT_WAREHOUSE_PATH

DEFAULT_PORT = 8501
DEFAULT_HOST = "127.0.0.1"


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


def streamlit_command(warehouse: Path, port: int, host: str) -> list[str]:
    """The command line of the dashboard: `dashboard.serve` with the arguments of `streamlit run`."""
    spec = importlib.util.find_spec("dashboard.app")  # its file, without importing Streamlit here
    assert spec is not None and spec.origin is not None, "the dashboard package is not installed"
    return [
        sys.executable, "-m", "dashboard.serve", spec.origin,
        "--server.address", host,
        "--server.port", str(port),
        "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
        "--client.toolbarMode", "viewer",
        "--", "--warehouse", str(warehouse.resolve()),
    ]


def run(args: argparse.Namespace) -> int:
    """Replaces this process by Streamlit's (so a signal to it reaches the server); returns only on error."""
    command = streamlit_command(args.warehouse, args.port, args.host)
    print(f"dashboard of {args.warehouse} on http://{args.host}:{args.port} (Ctrl+C to stop)", flush=True)
    os.execv(command[0], command)
    return 1  # not reached: execv raises OSError or never returns
