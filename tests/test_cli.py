"""The console script's dispatcher."""

import subprocess
import sys

from invoicing_warehouse.cli import SUBCOMMANDS


def test_help_lists_every_subcommand():
    result = subprocess.run(
        [sys.executable, "-m", "invoicing_warehouse.cli", "--help"], capture_output=True, text=True, check=True
    )
    for name in ("sandbox", "sync", "models", "demo", "doctor", "webhooks", "dashboard"):
        assert name in result.stdout
    assert set(SUBCOMMANDS) == {"sandbox", "sync", "models", "demo", "doctor", "webhooks", "dashboard"}


def test_unknown_subcommand_is_a_usage_error():
    result = subprocess.run(
        [sys.executable, "-m", "invoicing_warehouse.cli", "frobnicate"], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert "invalid choice" in result.stderr
