"""What an `InvoicingClient` is configured with, in one frozen object: where the API is, how to log in, how fast
to go, how hard to retry, how big an answer may be.

Built in one place from the settings door: `ClientSettings.of(api, ...)` takes the resolved `ApiSettings`
(credentials.py: environment, `.env`, dlt's files) and the choices of the caller (scope, rate, token reuse);
the answer cap defaults to `INVOICING_MAX_ANSWER_BYTES` (answers.py). The client's seams that are not
settings (its transport, clock and sleep, which tests replace) stay arguments of the client.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.http.answers import max_answer_bytes

if TYPE_CHECKING:
    from pipelines.invoicing.credentials import ApiSettings


@dataclass(frozen=True)
class ClientSettings:
    """The settings of one client. `shared_budget` (default True): pace on the one budget of every process
    calling the same API host (database_budget.py across hosts, else host_budget.py on this machine); False
    only for a client on a simulated clock, which cannot share real time. `keep_token`: start on the token
    the last process kept (token_cache.py). The secret is left out of `repr`."""

    base_url: str
    client_id: str
    client_secret: str = field(repr=False)
    scope: str = "read"
    rate_limit_per_s: float = 10.0
    max_retries: int = 5
    backoff_base_s: float = 0.5
    backoff_cap_s: float = 8.0
    timeout_s: float = 60.0
    shared_budget: bool = True
    keep_token: bool = False
    # read when the settings are built, as the client did when it was built
    answer_cap_bytes: int = field(default_factory=max_answer_bytes)

    def __post_init__(self) -> None:
        if not self.base_url:
            raise InvoicingApiError("configuration", "base_url", detail="no base URL configured")
        # one spelling of the address for the budget's key, the token cache's key and the errors
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))

    @classmethod
    def of(cls, api: ApiSettings, *, scope: str = "read", rate_limit_per_s: float = 10.0,
           keep_token: bool = False) -> ClientSettings:
        """The settings of a client of the portal `api` (resolved by credentials.py), with the caller's
        scope, rate and token reuse; retries, timeouts and the answer cap at their defaults."""
        return cls(api.base_url, api.client_id, api.client_secret, scope=scope, rate_limit_per_s=rate_limit_per_s,
                   keep_token=keep_token)
