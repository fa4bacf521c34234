"""The one error type of the extraction: what failed, where, what the API said, and what to do about it.

Every expected failure (bad credentials, a refused scope, an unreachable base URL, a malformed answer,
a server that keeps failing) becomes an `InvoicingApiError` whose `str()` is one line a person can act on.
Secrets never enter these messages: only the endpoint path, the HTTP status and the API's own text.
"""

from __future__ import annotations

# What a person should do, by kind of failure.
HINTS = {
    "credentials": "check SOURCES__INVOICING__CLIENT_ID and SOURCES__INVOICING__CLIENT_SECRET "
    "(or [sources.invoicing] in .dlt/secrets.toml)",
    "scope": "the API client must be allowed the 'read' scope; ask the portal administrator",
    "unreachable": "check SOURCES__INVOICING__BASE_URL (e.g. https://api.infast.fr/api/v2) and the network",
    "malformed": "the service answered something that is not the documented JSON; retry later or report it",
    "server": "the service kept failing; retry later",
    "rate_limited": "the service kept refusing for rate limiting; lower the rate or retry later",
    "http": "the request was refused; see the API message",
    "portals": "fix the portals file (its format: portals.example.toml at the project root)",
    "configuration": "set the missing setting in the environment or in .dlt/config.toml / .dlt/secrets.toml",
}


class InvoicingApiError(Exception):
    """A failure of the Invoicing API extraction, carrying endpoint, status and the API's message."""

    def __init__(
        self,
        kind: str,
        endpoint: str,
        status: int | None = None,
        api_message: str | None = None,
        detail: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.kind = kind
        self.hint = hint  # what to do, when the kind's usual hint would name the wrong setting
        self.endpoint = endpoint
        self.status = status
        self.api_message = api_message
        self.detail = detail
        super().__init__(self.describe())

    def describe(self) -> str:
        """One line: `<endpoint>: HTTP <status>: <API message> (<detail>); <hint>`."""
        parts = [self.endpoint]
        if self.status is not None:
            parts.append(f"HTTP {self.status}")
        if self.api_message:
            parts.append(f"API says: {self.api_message!r}")
        if self.detail:
            parts.append(self.detail)
        hint = self.hint or HINTS.get(self.kind)
        text = ": ".join(parts)
        return f"{text}; {hint}" if hint else text


def api_message_of(body: object, fallback_text: str = "") -> str | None:
    """The API's own error text from an error body.

    The service answers `{"error": msg, "code": n, "details": [...]}`; the token endpoint answers the OAuth2
    `{"error": code, "error_description": text}`. Anything else: the start of the raw text.
    """
    if isinstance(body, dict):
        description = body.get("error_description")
        error = body.get("error")
        if description:
            return f"{error}: {description}" if error else str(description)
        if error:
            details = body.get("details")
            if isinstance(details, list) and details:
                rendered = "; ".join(
                    str(d.get("message", d)) if isinstance(d, dict) else str(d) for d in details[:3]
                )
                return f"{error} ({rendered})"
            return str(error)
        if body.get("message"):
            return str(body["message"])
    text = fallback_text.strip()
    return text[:200] if text else None
