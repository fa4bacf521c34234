"""Alerts (invoicing_warehouse/runs/alerts.py, issue 44): a failed sync, a gate that holds figures back and a stale
portal each reach a real HTTP sink and a real SMTP server (aiosmtpd) on 127.0.0.1 exactly once; a second failing run
sends nothing new; the recovery of each is announced once; a channel that cannot be reached never changes a command's
exit code; a secret in a channel's URL is never printed. The truth is what the two servers received."""

from __future__ import annotations

import contextlib
import email
import email.policy
import io
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import duckdb
import pytest
from aiosmtpd.controller import Controller

from invoicing_warehouse.cli import main
from tests.support.fixture_factory import copied_warehouse, point_at, synced_warehouse

DUPLICATE = "insert into invoicing_raw.customers select * from invoicing_raw.customers order by id limit 1"
UNDO_DUPLICATE = ("delete from invoicing_raw.customers where rowid = (select max(rowid) from invoicing_raw.customers "
                  "where id = (select min(id) from invoicing_raw.customers))")
WAIT_S = 10.0
pytestmark = [
    # the test's SMTP server takes a login without TLS: loopback only, as no real relay should
    pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS:UserWarning"),
    # Apprise's optional PGP support imports imghdr (gone in 3.13, where it guards the import)
    pytest.mark.filterwarnings("ignore:'imghdr' is deprecated:DeprecationWarning"),
]


class HttpSink:
    """A JSON webhook receiver on 127.0.0.1: every POST body, parsed."""

    def __init__(self) -> None:
        received = self.received = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                received.append(json.loads(body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/alert-secret-path-0123456789"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class MailSink:
    """An SMTP server on 127.0.0.1 (aiosmtpd) that requires a login, as a mail relay does: every message taken
    from the right user and password (plain text, loopback only)."""

    USER, PASSWORD = "alerts", "mail-password-0123456789"

    def __init__(self) -> None:
        received = self.received = []

        def authenticator(server, session, envelope, mechanism, auth_data):
            from aiosmtpd.smtp import AuthResult, LoginPassword

            ok = isinstance(auth_data, LoginPassword) and (auth_data.login, auth_data.password) == (
                self.USER.encode(), self.PASSWORD.encode())
            return AuthResult(success=ok)

        class Handler:
            async def handle_DATA(self, server, session, envelope):
                message = email.message_from_bytes(envelope.content, policy=email.policy.default)
                body = message.get_body(preferencelist=("plain",))
                received.append(f"{message['subject']}\n{body.get_content() if body else ''}")
                return "250 OK"

        # aiosmtpd's start-up probe connects to the port it was given: it needs a real one, not 0
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port, authenticator=authenticator,
                                     auth_require_tls=False, auth_required=True)
        self.controller.start()
        self.url = (f"mailto://{self.USER}:{self.PASSWORD}@127.0.0.1:{self.port}"
                    "?from=etl@example.test&to=finance-ops@example.test&mode=insecure")

    def stop(self) -> None:
        self.controller.stop()


@pytest.fixture(scope="module")
def sinks():
    http, mail = HttpSink(), MailSink()
    yield http, mail
    http.stop()
    mail.stop()


pytestmark = pytest.mark.sandbox(seed=44, scale=20, rate_limit_per_s=0)  # the module's `shared_sandbox`


@pytest.fixture(scope="module")
def base(shared_sandbox, tmp_path_factory) -> Path:
    """A warehouse synced from the module's sandbox, its models built and published."""
    return synced_warehouse(tmp_path_factory.mktemp("alerts-base"), shared_sandbox)


@pytest.fixture
def alerting(sinks, shared_sandbox, base, tmp_path, monkeypatch):
    """A copy of the base warehouse, the CLI pointed at the sandbox and the two sinks (emptied)."""
    http, mail = sinks
    http.received.clear()
    mail.received.clear()
    warehouse = copied_warehouse(base, tmp_path)
    point_at(monkeypatch, shared_sandbox)
    monkeypatch.setenv("INVOICING_ALERT_URL", http.url)
    monkeypatch.setenv("INVOICING_ALERT_APPRISE_URLS", mail.url)
    monkeypatch.chdir(tmp_path)
    return warehouse, http, mail


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(list(argv))
    return code, out.getvalue()


def _settle(mail, count: int) -> None:
    """Waits (bounded) until the SMTP server has `count` messages: aiosmtpd hands them over on its own loop."""
    deadline = time.monotonic() + WAIT_S
    while len(mail.received) < count and time.monotonic() < deadline:
        time.sleep(0.05)


def _states(http, kind: str) -> list[str]:
    return [message["state"] for message in http.received if message["kind"] == kind]


def test_a_failed_sync_is_announced_once_and_its_recovery_once(alerting, shared_sandbox, monkeypatch):
    warehouse, http, mail = alerting
    monkeypatch.setenv("SOURCES__INVOICING__CLIENT_SECRET", "a-wrong-secret-for-this-test")
    for _ in range(2):  # the second failing run sends nothing new
        code, output = _run("sync", "--warehouse", str(warehouse), "--rate-limit", "0")
        assert code == 1, output
    _settle(mail, 1)
    assert _states(http, "failed_run") == ["raised"]
    assert http.received[0]["condition"] == "sync:default" and "sync default failed" in http.received[0]["text"]
    assert len(mail.received) == 1 and "sync default failed" in mail.received[0]
    monkeypatch.setenv("SOURCES__INVOICING__CLIENT_SECRET", shared_sandbox.client_secret)  # the right secret again
    code, output = _run("sync", "--warehouse", str(warehouse), "--rate-limit", "0")
    assert code == 0, output
    _settle(mail, 2)
    assert _states(http, "failed_run") == ["raised", "cleared"]
    assert len(mail.received) == 2 and "RESOLVED: sync default failed" in mail.received[1]
    # the URLs' secrets never reach the output
    assert "alert-secret-path" not in output and "mail-password" not in output


def test_figures_held_back_are_announced_once_and_their_release_once(alerting):
    warehouse, http, mail = alerting
    with duckdb.connect(str(warehouse)) as connection:
        connection.execute(DUPLICATE)
    for _ in range(2):
        code, output = _run("models", "--warehouse", str(warehouse))
        assert code == 1, output
    _settle(mail, 1)
    held = [m for m in http.received if m["kind"] == "figures_held"]
    assert [m["state"] for m in held] == ["raised"]
    assert held[0]["condition"] == "held:ids_unique on invoicing_raw.customers"
    assert "marts.receivables" in held[0]["details"]["protects"] and held[0]["since"]
    assert len(mail.received) == 1 and "figures held back: ids_unique on invoicing_raw.customers" in mail.received[0]
    with duckdb.connect(str(warehouse)) as connection:
        connection.execute(UNDO_DUPLICATE)
    code, output = _run("models", "--warehouse", str(warehouse))
    assert code == 0, output
    _settle(mail, 2)
    assert _states(http, "figures_held") == ["raised", "cleared"]
    assert len(mail.received) == 2


def test_a_stale_portal_is_announced_once_and_its_freshness_again_once(alerting):
    warehouse, http, mail = alerting
    code, output = _run("sync", "--warehouse", str(warehouse), "--rate-limit", "0")  # its last sync recorded
    assert code == 0 and http.received == [], output
    # synced a moment ago: stale after 1.2 ms, fresh again under a day's threshold
    for _ in range(2):
        code, output = _run("status", "--warehouse", str(warehouse), "--stale-after", "0.00002")
        assert code == 1, output
    _settle(mail, 1)
    assert _states(http, "stale") == ["raised"] and http.received[0]["portal"] == "default"
    assert len(mail.received) == 1 and "default: stale" in mail.received[0]
    code, output = _run("status", "--warehouse", str(warehouse), "--stale-after", "1440")
    assert code == 0, output
    _settle(mail, 2)
    assert _states(http, "stale") == ["raised", "cleared"] and len(mail.received) == 2


def test_an_alert_that_cannot_be_sent_leaves_the_run_alone_and_is_tried_again(alerting, monkeypatch):
    warehouse, http, mail = alerting
    assert _run("sync", "--warehouse", str(warehouse), "--rate-limit", "0")[0] == 0
    monkeypatch.setenv("INVOICING_ALERT_URL", "http://127.0.0.1:9/nobody-listens-here-0123456789")
    monkeypatch.delenv("INVOICING_ALERT_APPRISE_URLS")
    code, output = _run("status", "--warehouse", str(warehouse), "--stale-after", "0.00002")
    assert code == 1  # stale: the status's own code, not the alert's failure
    assert "alert not sent: the alert webhook" in output and "nobody-listens-here" not in output
    monkeypatch.setenv("INVOICING_ALERT_URL", http.url)  # reachable again: the same condition is announced now
    code, output = _run("status", "--warehouse", str(warehouse), "--stale-after", "0.00002")
    assert _states(http, "stale") == ["raised"], output


def test_an_alert_url_in_plain_http_to_another_host_is_refused_naming_the_setting(alerting, monkeypatch):
    warehouse, http, _ = alerting
    assert _run("sync", "--warehouse", str(warehouse), "--rate-limit", "0")[0] == 0
    monkeypatch.setenv("INVOICING_ALERT_URL", "http://alerts.example.com/hooks/secret-token-0123456789")
    code, output = _run("status", "--warehouse", str(warehouse), "--stale-after", "0.00002")
    assert code == 1
    assert "INVOICING_ALERT_URL uses plain http://" in output and "secret-token" not in output
    assert http.received == []


def test_dagster_announces_a_failed_job_once_and_its_recovery(sinks, tmp_path, monkeypatch):
    """The run-failure sensor records a failed job and announces it; a second failed run of the job sends nothing
    new; the success sensor announces the recovery (dagster_project/alert_sensors.py)."""
    from dagster import DagsterEventType, DagsterInstance, Definitions, job, op
    from dagster import build_run_status_sensor_context as context_of

    from assets.resources import WarehouseResource
    from dagster_project.alert_sensors import build_alert_sensors

    http, mail = sinks
    http.received.clear()
    mail.received.clear()
    monkeypatch.setenv("INVOICING_ALERT_URL", http.url)
    monkeypatch.setenv("INVOICING_ALERT_APPRISE_URLS", mail.url)
    should_fail = {"now": True}

    @op
    def step() -> None:
        if should_fail["now"]:
            raise RuntimeError("the API answered 503 three times")

    @job(name="sync_job")
    def sync_job() -> None:
        step()

    sensors = {sensor.name: sensor for sensor in build_alert_sensors({"default": {}})}
    resources = {"warehouse": WarehouseResource(path=str(tmp_path / "warehouse.duckdb"))}
    definitions = Definitions(jobs=[sync_job])
    with DagsterInstance.ephemeral() as instance:
        def run_and_sense(sensor_name: str, event_type: DagsterEventType) -> None:
            result = definitions.resolve_job_def("sync_job").execute_in_process(instance=instance,
                                                                               raise_on_error=False)
            (record,) = instance.all_logs(result.run_id, of_type=event_type)
            context = context_of(sensor_name=sensor_name, dagster_event=record.dagster_event,
                                 dagster_instance=instance, dagster_run=result.dagster_run, resources=resources)
            sensor = sensors[sensor_name]
            sensor(context.for_run_failure() if event_type == DagsterEventType.RUN_FAILURE else context)

        run_and_sense("alert_on_run_failure", DagsterEventType.RUN_FAILURE)
        run_and_sense("alert_on_run_failure", DagsterEventType.RUN_FAILURE)  # nothing new
        _settle(mail, 1)
        assert [(m["condition"], m["state"]) for m in http.received] == [("run:sync_job", "raised")]
        assert "the API answered 503" in http.received[0]["text"] and len(mail.received) == 1
        should_fail["now"] = False
        run_and_sense("alert_on_run_recovery", DagsterEventType.RUN_SUCCESS)
    _settle(mail, 2)
    assert [(m["condition"], m["state"]) for m in http.received] == [("run:sync_job", "raised"),
                                                                     ("run:sync_job", "cleared")]
    assert len(mail.received) == 2
