"""Alerts: operators hear of a failed run, figures held back, a stale portal or dead hints before the finance team
opens a page, and hear again when each condition clears.

One evaluation (`notify_changes`) derives the open conditions from what the runs already record (the gate's state,
invoicing_warehouse/runs/gate_state.py; the sync log and its failures, invoicing_warehouse/runs/run_log.py; the hints'
dead letters), compares them with what was announced (kept in the sync log, under its lock, so that of several processes
exactly one announces each change) and sends one message per condition raised and one per condition cleared: a condition
that stays open is not announced again, whatever the number of runs that meet it. The CLI's `sync`, `models` and
`status` and the Dagster sensors (dagster_project/alert_sensors.py) call it.

Channels (docs/settings.md), any or both:
- INVOICING_ALERT_URL: an HTTP POST of one JSON object per message, with a `text` field (what Slack's and Teams'
  incoming webhooks show) beside structured fields (`state`, `condition`, `portal`, `since`, ...);
- INVOICING_ALERT_APPRISE_URLS: Apprise URLs, separated by spaces or commas (`mailtos://user:pass@smtp.host?to=...`
  for e-mail over SMTP, `slack://...`, `msteams://...`: https://github.com/caronc/apprise/wiki).
Both are secrets (a webhook URL is its own credential): they are registered with the scrubber and never printed.
Sending is bounded in time, and a message that no channel took is tried again at the next evaluation; an alert that
cannot be sent never fails the run that evaluated it.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from invoicing_warehouse.engine.environment.reader import environment
from invoicing_warehouse.engine.environment.run_settings import ALERT_APPRISE_URLS, ALERT_URL
from invoicing_warehouse.engine.redaction import redact, register_secret
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs import gate_state, run_log
from invoicing_warehouse.runs.status import PortalStatus, warehouse_status
from pipelines.invoicing.url_policy import url_problem

ALERT_URL_ENV = ALERT_URL.name
APPRISE_URLS_ENV = ALERT_APPRISE_URLS.name
SEND_TIMEOUT_S = 10.0  # per channel: a slow receiver delays a run by at most this much
TITLE = "invoicing-warehouse"


class AlertSettingsError(ValueError):
    """An alert setting that cannot be used; the message names it, never its value."""


@dataclass(frozen=True)
class AlertChannels:
    """Where alerts go: a JSON webhook and Apprise URLs (none: alerts are off)."""

    webhook_url: str | None = None
    apprise_urls: tuple[str, ...] = ()

    @property
    def enabled(self) -> bool:
        """Whether any channel is set."""
        return bool(self.webhook_url or self.apprise_urls)


def channels_from_env(environ: Mapping[str, str] | None = None) -> AlertChannels:
    """The channels the environment sets; raises AlertSettingsError naming a setting that cannot be used."""
    settings = environment(environ)
    webhook = settings.text(ALERT_URL)
    apprise_urls = tuple(url for url in re.split(r"[\s,]+", settings.text(ALERT_APPRISE_URLS) or "") if url)
    for secret in (webhook, *apprise_urls):
        register_secret(secret)
    if webhook is not None and (problem := url_problem(webhook)):
        raise AlertSettingsError(f"{ALERT_URL_ENV} {problem}")
    if apprise_urls:
        import apprise

        for number, url in enumerate(apprise_urls, 1):
            if apprise.Apprise.instantiate(url) is None:
                raise AlertSettingsError(f"{APPRISE_URLS_ENV}: URL number {number} is not one Apprise knows "
                                         "(https://github.com/caronc/apprise/wiki)")
    return AlertChannels(webhook, apprise_urls)


@dataclass(frozen=True)
class Condition:
    """One open condition: `key` identifies it across runs (`held:<check> on <relation>`, `stale:<portal>`, ...)."""

    key: str
    kind: str  # failed_run, figures_held, read_incomplete, stale, dead_hints
    summary: str  # one line
    portal: str | None = None
    since: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def as_record(self) -> dict[str, Any]:
        """What the sync log keeps of it (and the cleared message repeats)."""
        return {"kind": self.kind, "summary": self.summary, "portal": self.portal, "since": self.since,
                "details": self.details}


def open_conditions(target: WarehouseTarget, portals: list[str] | None = None,
                    threshold: timedelta | None = None) -> list[Condition]:
    """Every condition open on `target` now: failed runs, the gate's blocking failures and held marts, portals
    stale past the status's threshold (only those that synced once: a portal that never synced is a failed run),
    dead hints."""
    conditions = [Condition(key, "failed_run", f"{key.replace(':', ' ', 1)} failed: {failure.get('message', '')}",
                            portal=key.split(":", 1)[1] if key.startswith("sync:") else None,
                            since=failure.get("since"))
                  for key, failure in sorted(run_log.failures(target).items())]
    status = warehouse_status(target, portals, threshold=threshold)
    state = gate_state.load(target)
    for failure in state.failures:
        name = f"{failure.get('check')} on {failure.get('relation')}"
        conditions.append(Condition(
            f"held:{name}", "figures_held",
            f"figures held back: {name}: {failure.get('description') or 'failed'} "
            f"(protects {', '.join(failure.get('protects') or []) or 'every figure'})",
            since=state.failing_since, details={"protects": list(failure.get("protects") or [])}))
    for read in state.degraded_reads.values():
        # invoicing_warehouse/runs/gate.py held_marts' words
        reason = f"portal {read.portal}: {read.table} read incomplete"
        held = sorted(mart for mart, why in state.held_marts.items() if why.startswith(reason))
        conditions.append(Condition(
            f"read:{read.portal}/{read.table}", "read_incomplete",
            f"{read.portal}: {read.table} read may be incomplete, its marts keep their last good figures: "
            f"{'; '.join(read.notes)}", portal=read.portal, since=read.since, details={"held_marts": held}))
    for line in status.portals:
        conditions.extend(_portal_conditions(line, status.stale_after_s))
    return conditions


def _portal_conditions(line: PortalStatus, stale_after_s: float) -> list[Condition]:
    found = []
    if line.last_sync_at is not None and not line.fresh:
        found.append(Condition(f"stale:{line.portal}", "stale",
                               f"{line.portal}: stale, last successful sync {line.last_sync_at} "
                               f"(threshold {stale_after_s / 60:g} min)", portal=line.portal,
                               since=line.last_sync_at))
    if line.dead_hints:
        found.append(Condition(f"dead_hints:{line.portal}", "dead_hints",
                               f"{line.portal}: webhook hints kept dead, a person must trace them "
                               "(invoicing-warehouse webhooks dead-letters)", portal=line.portal))
    return found


@dataclass
class AlertOutcome:
    """What one evaluation announced, and what could not be sent (messages, never a secret)."""

    raised: list[str] = field(default_factory=list)
    cleared: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def notify_changes(target: WarehouseTarget, portals: list[str] | None = None, *,
                   threshold: timedelta | None = None, channels: AlertChannels | None = None) -> AlertOutcome:
    """Evaluates the open conditions and announces what changed since the last announcement (nothing when no
    channel is set). Never raises: a setting that cannot be used or a channel that fails is in `errors`."""
    outcome = AlertOutcome()
    try:
        channels = channels if channels is not None else channels_from_env()
        if not channels.enabled:
            return outcome
        current = {condition.key: condition.as_record() for condition in open_conditions(target, portals, threshold)}
        raised, cleared = run_log.alert_transitions(target, current)
    except Exception as error:  # an alert never fails the run that evaluates it  # noqa: BLE001
        outcome.errors.append(redact(f"alerts not evaluated: {type(error).__name__}: {error}"))
        return outcome
    unsent_raised, unsent_cleared = {}, {}
    for key, record in raised.items():
        if _send(channels, _message("raised", key, record, target), outcome):
            outcome.raised.append(key)
        else:
            unsent_raised[key] = record
    for key, record in cleared.items():
        if _send(channels, _message("cleared", key, record, target), outcome):
            outcome.cleared.append(key)
        else:
            unsent_cleared[key] = record
    if unsent_raised or unsent_cleared:
        try:
            run_log.undo_alert_transitions(target, unsent_raised, unsent_cleared)
        except Exception as error:  # noqa: BLE001
            outcome.errors.append(redact(f"alerts: {type(error).__name__}: {error}"))
    return outcome


def outcome_lines(outcome: AlertOutcome) -> list[str]:
    """What a command prints (stderr) of an evaluation: the alerts sent and those that could not be."""
    return ([f"alert sent: {key}" for key in outcome.raised]
            + [f"alert sent: {key} resolved" for key in outcome.cleared]
            + [f"alert not sent: {error}" for error in outcome.errors])


def _message(state: str, key: str, record: dict[str, Any], target: WarehouseTarget) -> dict[str, Any]:
    summary = record.get("summary", key)
    text = f"[{TITLE}] {'RESOLVED: ' if state == 'cleared' else ''}{summary}"
    if record.get("since"):
        text += f" (since {record['since']})"
    return {"text": redact(text), "title": f"{TITLE}: {'resolved' if state == 'cleared' else 'alert'}",
            "state": state, "condition": key, "kind": record.get("kind"), "portal": record.get("portal"),
            "since": record.get("since"), "details": record.get("details") or {},
            "warehouse": redact(target.describe())}


def _send(channels: AlertChannels, message: dict[str, Any], outcome: AlertOutcome) -> bool:
    """Sends `message` on every channel; True when at least one took it."""
    delivered = False
    if channels.webhook_url:
        delivered |= _bounded("the alert webhook", lambda: _post_json(channels.webhook_url or "", message), outcome)
    if channels.apprise_urls:
        delivered |= _bounded("Apprise", lambda: _apprise(channels.apprise_urls, message), outcome)
    return delivered


def _post_json(url: str, message: dict[str, Any]) -> None:
    import httpx

    response = httpx.post(url, json=message, timeout=SEND_TIMEOUT_S, follow_redirects=False)
    if response.status_code >= 300:
        raise RuntimeError(f"answered HTTP {response.status_code}")


def _apprise(urls: tuple[str, ...], message: dict[str, Any]) -> None:
    import apprise

    notifier = apprise.Apprise()
    for url in urls:
        notifier.add(url)
    kind = apprise.NotifyType.SUCCESS if message["state"] == "cleared" else apprise.NotifyType.FAILURE
    if not notifier.notify(body=message["text"], title=message["title"], notify_type=kind):
        raise RuntimeError("no Apprise service took the message")


def _bounded(channel: str, send: Any, outcome: AlertOutcome) -> bool:
    """Runs `send` in a thread and waits at most the send timeout and 5 s more (a library's own timeouts may not
    cover every step); a failure or a timeout is noted in `outcome`, redacted."""
    result: list[BaseException | None] = []

    def attempt() -> None:
        try:
            send()
            result.append(None)
        except BaseException as error:  # noqa: BLE001 - reported below, never raised into the run
            result.append(error)

    worker = threading.Thread(target=attempt, name="alert-send", daemon=True)
    worker.start()
    worker.join(SEND_TIMEOUT_S + 5)
    if not result:
        outcome.errors.append(f"{channel}: no answer within {SEND_TIMEOUT_S + 5:g} s")
        return False
    if result[0] is not None:
        outcome.errors.append(redact(f"{channel}: {type(result[0]).__name__}: {result[0]}"))
        return False
    return True
