"""`invoicing-warehouse dashboard`: `streamlit run` (with the warm-up) on the app's file, this machine only unless
told otherwise."""

import argparse
from pathlib import Path

from invoicing_warehouse.cli import dashboard_command


def _command(*argv: str) -> list[str]:
    parser = argparse.ArgumentParser()
    dashboard_command.add_arguments(parser)
    args = parser.parse_args(list(argv))
    return dashboard_command.streamlit_command(args.warehouse, args.port, args.host)


def test_binds_to_loopback_on_8501_by_default(tmp_path):
    command = _command("--warehouse", str(tmp_path / "w.duckdb"))
    # `streamlit run` with the warm-up (invoicing_warehouse/dashboard/serve.py)
    assert command[1:3] == ["-m", "invoicing_warehouse.dashboard.serve"]
    assert Path(command[3]).name == "app.py" and Path(command[3]).parent.name == "dashboard"
    options = dict(zip(command[4:-3:2], command[5:-3:2], strict=True))
    assert options["--server.address"] == "127.0.0.1"
    assert options["--server.port"] == "8501"
    assert command[-3:] == ["--", "--warehouse", str((tmp_path / "w.duckdb").resolve())]


def test_port_and_host_are_passed_on():
    options = dict(zip(*[iter(_command("--port", "9000", "--host", "127.0.0.2")[4:-3])] * 2, strict=True))
    assert (options["--server.address"], options["--server.port"]) == ("127.0.0.2", "9000")
