"""`invoicing-warehouse dashboard` as a real process on a free 127.0.0.1 port, for the browser tests and the
render benchmark: started, awaited on Streamlit's health endpoint (bounded), always stopped."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from harness.common import free_port

START_TIMEOUT_S = 60.0
PAGE_PATHS = {"Receivables": "", "Payables": "payables", "Cash outlook": "cash_outlook", "Trends": "trends",
              "Late-payment claims": "late_payment_claims", "Payment terms (D441-6)": "payment_terms",
              "Benchmarks": "benchmarks", "Freshness": "freshness"}
# the element whose appearance means a page has rendered its figures
PAGE_KEY_TABLES = {
    "Receivables": "overdue_customers",
    "Payables": "payables_this_week",
    "Cash outlook": "cash_outlook",
    "Late-payment claims": "claims_by_customer",
    "Payment terms (D441-6)": "payment_terms_received",
    "Trends": "trends",  # built at the last 12 month-ends on its first visit per publication
    "Benchmarks": "benchmarks",
    "Freshness": "raw_tables",  # its checks, run on the copy, follow below (bench/dashboard_render.py times them)
}


@contextmanager
def dashboard_process(warehouse: Path, log_path: Path, language: str | None = "en") -> Iterator[str]:
    """Runs the dashboard on `warehouse` until the block ends; yields its URL. Output goes to `log_path`.
    `language`: its INVOICING_LANGUAGE, English by default (the page names above and the tests' texts are
    English; a French session asks `?lang=fr`); None leaves the setting as the environment has it."""
    port = free_port()
    environment = dict(os.environ) if language is None else {**os.environ, "INVOICING_LANGUAGE": language}
    url = f"http://127.0.0.1:{port}"
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "invoicing_warehouse.cli", "dashboard", "--warehouse", str(warehouse),
             "--port", str(port)],
            stdout=log, stderr=subprocess.STDOUT, env=environment,
        )
        try:
            _wait_healthy(process, url, log_path)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=30)


def _wait_healthy(process: subprocess.Popen, url: str, log_path: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the dashboard exited with {process.returncode}: {log_path.read_text()}")
        try:
            if httpx.get(f"{url}/_stcore/health", timeout=2.0, trust_env=False).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"the dashboard did not answer on {url} within {START_TIMEOUT_S} s")
        time.sleep(0.25)
