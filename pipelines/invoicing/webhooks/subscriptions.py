"""Webhook subscriptions of one portal (GET / POST / DELETE /webhooks), idempotent, on the one HTTP client.

The subscriptions use their own API client (credentials.py, `webhook=True`) with the scope `read write`:
GET /webhooks needs `write` (spec: "the global default (read and write) applies"), and the sync's client
stays `read` only. They go through `InvoicingClient`, so they pace on the host's shared budget like every
other request of this machine.

- `register(url, events)`: one enabled subscription of `url` for exactly `events` afterwards. An equal one
  is kept (registering twice is one subscription); otherwise the new one is created *before* the old ones
  of that URL are removed, so no change goes unannounced in between (a change announced twice is one hint).
  A disabled subscription (the service disables one after 100 failed deliveries) is replaced.
- `remove(url=..., subscription_id=...)`: what is absent is reported, not an error.
Events default to every event the receiver understands (`hint_events.EVENTS`): the service would otherwise
send events the receiver refuses, and disable the subscription after 100 refusals.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from pipelines.invoicing.credentials import resolve_settings
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.hook_urls import masked
from pipelines.invoicing.http.client import InvoicingClient
from pipelines.invoicing.http.client_settings import ClientSettings
from pipelines.invoicing.portals import Portal
from pipelines.invoicing.record_ids import record_path
from pipelines.invoicing.settings import ENDPOINTS
from pipelines.invoicing.webhooks.hint_events import EVENTS

PATH = ENDPOINTS["webhooks"].path
SCOPE = "read write"
PAGE = 100
MAX_PAGES = 100  # 10,000 subscriptions: far more than any portal has; the loop stays bounded
DEFAULT_RATE_LIMIT = 10.0


@dataclass(frozen=True)
class Subscription:
    """One subscription as the service lists it (`enabled` None when the service does not say)."""

    id: str
    url: str
    events: tuple[str, ...]
    enabled: bool | None = None

    @classmethod
    def of(cls, record: dict) -> Subscription:
        """From the API's record."""
        events = record.get("events")
        return cls(str(record.get("id")), str(record.get("url", "")),
                   tuple(events) if isinstance(events, list) else (), record.get("enabled"))

    def line(self) -> str:
        """One line for the terminal, the URL's token masked."""
        state = "" if self.enabled is None else (" enabled" if self.enabled else " DISABLED")
        return f"{self.id}{state} {masked(self.url)} events: {', '.join(self.events)}"


def check_events(events: list[str] | None) -> list[str]:
    """The events to subscribe: `events` (each one a known event) or every event of `EVENTS`; raises
    ValueError naming an unknown event."""
    if not events:
        return sorted(EVENTS)
    unknown = sorted(set(events) - set(EVENTS))
    if unknown:
        raise ValueError(f"unknown event(s) {', '.join(unknown)}: the receiver would refuse them (422) and the "
                         f"service disables a subscription after 100 refusals; known: {', '.join(sorted(EVENTS))}")
    return sorted(set(events))


def webhook_client(portal: Portal, *, transport: httpx.BaseTransport | None = None) -> InvoicingClient:
    """The write-scope client of `portal`'s subscriptions (credentials.py `webhook=True`), at the portal's rate;
    raises InvoicingApiError naming the missing setting. `transport`: a test's mock API."""
    settings = resolve_settings(portal=portal, webhook=True)
    rate = portal.rate_limit_per_s if portal.rate_limit_per_s is not None else DEFAULT_RATE_LIMIT
    return InvoicingClient(ClientSettings.of(settings, scope=SCOPE, rate_limit_per_s=rate), transport=transport)


def _explained(error: InvoicingApiError, portal: Portal) -> InvoicingApiError:
    """The error with a hint that names the webhook client's settings (never a secret)."""
    env = f"SOURCES__INVOICING__PORTALS__{portal.name.upper()}" if portal.from_file else "SOURCES__INVOICING"
    hints = {
        "scope": "webhook subscriptions need an API client allowed the 'write' scope (GET, POST and DELETE "
                 f"/webhooks require it): give {env}__WEBHOOK_CLIENT_ID that scope, or set another client there",
        "credentials": f"check {env}__WEBHOOK_CLIENT_ID and {env}__WEBHOOK_CLIENT_SECRET (the write-scope client "
                       "of the webhook subscriptions, not the sync's)",
    }
    if error.kind not in hints:
        return error
    return InvoicingApiError(error.kind, error.endpoint, error.status, error.api_message, error.detail,
                             hint=hints[error.kind])


class Subscriptions:
    """The subscriptions of one portal through `client` (a `webhook_client`)."""

    def __init__(self, client: InvoicingClient, portal: Portal) -> None:
        self.client = client
        self.portal = portal

    def current(self) -> list[Subscription]:
        """Every subscription of the portal (paged with limit/skip, bounded)."""
        found: list[Subscription] = []
        for page in range(MAX_PAGES):
            try:
                records = self.client.get(PATH, {"limit": PAGE, "skip": page * PAGE}, tag="webhooks")
            except InvoicingApiError as error:
                raise _explained(error, self.portal) from None
            seen = {s.id for s in found}
            fresh = [Subscription.of(r) for r in records if isinstance(r, dict)] if isinstance(records, list) else []
            fresh = [s for s in fresh if s.id not in seen]
            if not fresh:  # the end, or a server that ignores `skip` (the same page again)
                break
            found += fresh
        return found

    def register(self, url: str, events: list[str], replaces: tuple[str, ...] = ()
                 ) -> tuple[Subscription, str, list[Subscription]]:
        """(the subscription, "exists" | "created", the older subscriptions of `url`, and those of the URLs
        `replaces` names, removed). `replaces`: URLs this one supersedes (a portal's URL of an older version,
        with the shared token where its door now is), removed only once `url`'s subscription exists."""
        wanted = tuple(sorted(set(events)))
        current = self.current()
        same_url = [s for s in current if s.url == url]
        superseded = [s for s in current if s.url in replaces and s.url != url]
        keep = next((s for s in same_url if tuple(sorted(s.events)) == wanted and s.enabled is not False), None)
        outcome = "exists"
        if keep is None:
            try:
                keep = Subscription.of(self.client.post(PATH, {"url": url, "events": list(wanted)}, tag="webhooks")
                                       or {})
            except InvoicingApiError as error:
                raise _explained(error, self.portal) from None
            outcome = "created"
        stale = [s for s in same_url if s.id != keep.id] + superseded
        for subscription in stale:
            self._delete(subscription.id)
        return keep, outcome, stale

    def remove(self, *, url: str | None = None, subscription_id: str | None = None,
               also: tuple[str, ...] = ()) -> list[Subscription]:
        """Removes the subscriptions of `url` (and of the URLs `also` names), or the one of `subscription_id`;
        returns those removed (empty when none was there)."""
        urls = ({url} if url is not None else set()) | set(also)
        chosen = [s for s in self.current() if s.url in urls
                  or (subscription_id is not None and s.id == subscription_id)]
        for subscription in chosen:
            self._delete(subscription.id)
        return chosen

    def _delete(self, subscription_id: str) -> None:
        try:
            self.client.delete(record_path(PATH, subscription_id), tag="webhooks")
        except InvoicingApiError as error:
            if error.status == 404:  # removed meanwhile: what was asked is done
                return
            raise _explained(error, self.portal) from None
