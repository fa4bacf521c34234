"""Every setting of a sandbox run: data, credentials, limits and injected faults."""

from __future__ import annotations

from dataclasses import dataclass, field

from invoicing_sandbox.contract import ContractProfile


@dataclass
class SandboxConfig:
    """Settings of one sandbox. Faults default to off; everything can be changed while it runs."""

    # data
    seed: int = 1
    scale: int = 1000  # about this many documents, other resources in proportion (see generator)
    # credentials of the one API client; it may ask for `read`, `write` or `read write`
    client_id: str = "sandbox-client"
    client_secret: str = "sandbox-secret"
    allowed_scopes: tuple[str, ...] = ("read", "write")
    token_lifetime_s: int = 604799  # the real service: 7 days minus one second
    # rate limit per client IP; 0 turns it off
    rate_limit_per_s: int = 10
    # how it is counted: "fixed" one-second windows (as the service's headers show), or "sliding" (any one-second
    # span); read when the limiter is made (invoicing_sandbox/ratelimit.py `edge_limiter`)
    rate_limit_mode: str = "fixed"
    # paging: default and maximum `limit`; a larger limit is clamped, or refused with 400
    default_page_size: int = 20
    max_page_size: int = 100
    page_size_policy: str = "clamp"  # "clamp" | "reject"
    # faults
    latency_ms: float = 0.0  # fixed latency added to every answer
    latency_jitter_ms: float = 0.0  # plus uniform 0..jitter
    error_rate: float = 0.0  # share of requests answered with a 5xx (500, 502, 503 at random)
    error_statuses: tuple[int, ...] = (500, 502, 503)  # the 5xx statuses `error_rate` draws from
    drop_rate: float = 0.0  # share of requests whose connection is dropped mid-answer
    revoke_token_after_requests: int = 0  # >0: tokens issued are revoked after this many requests
    clock_offset_s: float = 0.0  # sandbox clock = real time + offset
    # the background "application user": writes per second (0 = off)
    mutations_per_s: float = 0.0
    # webhooks: retry schedule of the real service, multiplied by this factor (1.0 = real time)
    webhook_time_factor: float = 1.0
    # webhook delivery faults (delivery_faults.py), off by default: each delivery lost (never sent), sent
    # twice, held back behind `webhook_reorder_depth` later ones, delayed (fixed + uniform jitter), or held
    # until `webhook_burst_size` wait; a held delivery goes out at the latest after `webhook_hold_max_ms`
    webhook_loss_rate: float = 0.0
    webhook_duplicate_rate: float = 0.0
    webhook_reorder_rate: float = 0.0
    webhook_reorder_depth: int = 3
    webhook_delay_ms: float = 0.0
    webhook_delay_jitter_ms: float = 0.0
    webhook_burst_size: int = 0
    webhook_hold_max_ms: float = 1000.0
    # a list that fails alone: (path of a list, as "/supplier-documents", HTTP status) pairs; every GET of that
    # list (not of its records by id) is answered with that status, the other lists as usual
    failing_lists: tuple[tuple[str, int], ...] = ()
    fault_seed: int | None = None  # seed of the fault dice (None: from `seed`)
    # what is served where the contract is silent: ContractProfile.default() (as always) or .strict()
    contract: ContractProfile = field(default_factory=ContractProfile.default)
    extra: dict = field(default_factory=dict)

    def served_max_page_size(self, resource: str | None = None) -> int:
        """The largest `limit` served (on the list `resource`, when given): `max_page_size`, lowered to the
        contract profile's when it has one (a test asking a strict sandbox for pages of 37 gets 37), and to
        the profile's maximum of that list (`max_page_size_per_list`)."""
        profile = self.contract.list_max_page_size(resource) if resource else self.contract.max_page_size
        return min(self.max_page_size, profile or self.max_page_size)

    def served_token_lifetime_s(self) -> int:
        """The lifetime of issued tokens: `token_lifetime_s`, shortened to the contract profile's when it
        has one."""
        return int(min(self.token_lifetime_s, self.contract.token_lifetime_s or self.token_lifetime_s))
