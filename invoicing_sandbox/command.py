"""`invoicing-warehouse sandbox`: serves a seeded emulator of the Invoicing API v2 until interrupted."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from dataclasses import replace

from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.contract import DELETED_CUSTOMER_MODES, ContractProfile

DEFAULTS = SandboxConfig()
DEFAULT_PORT = 8765


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The subcommand's options (every one maps to a `SandboxConfig` setting)."""
    parser.add_argument("--host", default="127.0.0.1", help="address to serve on (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 = any free)"
    )
    parser.add_argument(
        "--portals",
        type=int,
        default=1,
        help="serve this many portals p1..pN (seeds SEED, SEED+1, ...) on one port behind one per-IP limit",
    )
    parser.add_argument("--seed", type=int, default=DEFAULTS.seed, help="seed of the generated data")
    parser.add_argument("--scale", type=int, default=DEFAULTS.scale, help="about this many documents")
    parser.add_argument("--client-id", default=DEFAULTS.client_id, help="the API client's id")
    parser.add_argument("--client-secret", default=DEFAULTS.client_secret, help="the API client's secret")
    parser.add_argument(
        "--rate-limit",
        type=int,
        default=DEFAULTS.rate_limit_per_s,
        help="requests per second per client IP (0 = off; default 10)",
    )
    parser.add_argument(
        "--rate-limit-mode",
        choices=("fixed", "sliding"),
        default=DEFAULTS.rate_limit_mode,
        help="count the limit in fixed one-second windows (default, as the service) or over any one-second span",
    )
    parser.add_argument("--latency-ms", type=float, default=0.0, help="fixed latency added to every answer")
    parser.add_argument("--jitter-ms", type=float, default=0.0, help="plus a uniform random 0..jitter")
    parser.add_argument(
        "--error-rate", type=float, default=0.0, help="share of requests answered 500/502/503"
    )
    parser.add_argument("--drop-rate", type=float, default=0.0, help="share of answers cut off mid-way")
    parser.add_argument(
        "--page-size-policy",
        choices=("clamp", "reject"),
        default=DEFAULTS.page_size_policy,
        help="a limit above the maximum is clamped (default) or refused with 400",
    )
    parser.add_argument(
        "--max-page-size",
        type=int,
        default=None,
        help=f"maximum limit (default {DEFAULTS.max_page_size}, or the contract profile's)",
    )
    parser.add_argument(
        "--revoke-token-after",
        type=int,
        default=0,
        help="revoke each token after this many requests (0 = never)",
    )
    parser.add_argument("--clock-offset-s", type=float, default=0.0, help="sandbox clock minus real time")
    parser.add_argument(
        "--token-lifetime-s",
        type=int,
        default=None,
        help="token lifetime in seconds (default 604799, or the contract profile's)",
    )
    parser.add_argument(
        "--contract",
        choices=("default", "strict"),
        default="default",
        help="default: the sandbox's conveniences; strict: only what the contract states (invoicing_sandbox/README.md)",
    )
    parser.add_argument(
        "--deleted-customers",
        choices=DELETED_CUSTOMER_MODES,
        default=None,
        help="soft-deleted customers listed with deletedAt, flagged without it, or hidden from lists "
        "(default: the contract profile's)",
    )
    parser.add_argument(
        "--mutations-per-s",
        type=float,
        default=0.0,
        help="writes per second of the background application user (0 = off)",
    )
    parser.add_argument(
        "--webhook-time-factor",
        type=float,
        default=1.0,
        help="multiplies the webhook retry schedule (1 s, 30 s, 5 min, ...)",
    )
    faults = parser.add_argument_group("webhook delivery faults (all off by default; seeded by --seed)")
    faults.add_argument("--webhook-loss-rate", type=float, default=0.0,
                        help="share of deliveries never sent (no retry)")
    faults.add_argument("--webhook-duplicate-rate", type=float, default=0.0,
                        help="share of deliveries sent twice with the same delivery id")
    faults.add_argument("--webhook-reorder-rate", type=float, default=0.0,
                        help="share of deliveries held back and sent after later ones")
    faults.add_argument("--webhook-reorder-depth", type=int, default=DEFAULTS.webhook_reorder_depth,
                        help="a held-back delivery goes out after this many later ones (default %(default)s)")
    faults.add_argument("--webhook-delay-ms", type=float, default=0.0, help="fixed delay before each delivery")
    faults.add_argument("--webhook-delay-jitter-ms", type=float, default=0.0, help="plus a uniform random 0..jitter")
    faults.add_argument("--webhook-burst-size", type=int, default=0,
                        help="hold deliveries and release them N at a time (0 or 1 = off)")
    faults.add_argument("--webhook-hold-max-ms", type=float, default=DEFAULTS.webhook_hold_max_ms,
                        help="a held (reordered or burst) delivery goes out at the latest after this "
                             "(default %(default)s)")


def contract_from(args: argparse.Namespace) -> ContractProfile:
    """The contract profile the options describe: a preset, then the single switches given explicitly
    (an explicit --max-page-size or --token-lifetime-s wins over the profile's)."""
    profile = ContractProfile.named(args.contract)
    switches = {
        "deleted_customers": args.deleted_customers,
        "max_page_size": args.max_page_size if profile.max_page_size is not None else None,
        "token_lifetime_s": args.token_lifetime_s if profile.token_lifetime_s is not None else None,
    }
    return replace(profile, **{name: value for name, value in switches.items() if value is not None})


def config_from(args: argparse.Namespace) -> SandboxConfig:
    """The `SandboxConfig` the options describe."""
    return SandboxConfig(
        contract=contract_from(args),
        seed=args.seed,
        scale=args.scale,
        client_id=args.client_id,
        client_secret=args.client_secret,
        rate_limit_per_s=args.rate_limit,
        rate_limit_mode=args.rate_limit_mode,
        latency_ms=args.latency_ms,
        latency_jitter_ms=args.jitter_ms,
        error_rate=args.error_rate,
        drop_rate=args.drop_rate,
        page_size_policy=args.page_size_policy,
        max_page_size=args.max_page_size or DEFAULTS.max_page_size,
        revoke_token_after_requests=args.revoke_token_after,
        clock_offset_s=args.clock_offset_s,
        token_lifetime_s=args.token_lifetime_s or DEFAULTS.token_lifetime_s,
        mutations_per_s=args.mutations_per_s,
        webhook_time_factor=args.webhook_time_factor,
        webhook_loss_rate=args.webhook_loss_rate,
        webhook_duplicate_rate=args.webhook_duplicate_rate,
        webhook_reorder_rate=args.webhook_reorder_rate,
        webhook_reorder_depth=args.webhook_reorder_depth,
        webhook_delay_ms=args.webhook_delay_ms,
        webhook_delay_jitter_ms=args.webhook_delay_jitter_ms,
        webhook_burst_size=args.webhook_burst_size,
        webhook_hold_max_ms=args.webhook_hold_max_ms,
    )


def host_from(args: argparse.Namespace):
    """The `SandboxHost` of `--portals N`: portal pI has seed SEED + I - 1 and its own credentials."""
    from invoicing_sandbox.host import SandboxHost

    config = config_from(args)
    configs = {
        f"p{i}": replace(config, seed=args.seed + i - 1, client_id=f"{args.client_id}-p{i}",
                         client_secret=f"{args.client_secret}-p{i}")
        for i in range(1, args.portals + 1)
    }
    return SandboxHost(configs=configs, rate_limit_per_s=args.rate_limit, rate_limit_mode=args.rate_limit_mode,
                       host=args.host, port=args.port)


def run(args: argparse.Namespace) -> int:
    """Starts the sandbox, prints where and how to reach it, serves until Ctrl-C or SIGTERM; returns 0."""
    from invoicing_sandbox.server import SandboxServer

    if args.portals < 1:
        print("error: --portals must be at least 1", file=sys.stderr)
        return 2
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    if args.portals > 1:
        host = host_from(args)
        server, portals = host, dict(host.portals)
    else:
        single = SandboxServer(config_from(args), host=args.host, port=args.port)
        server, portals = single, {"": single}  # one portal: the lines scripts already read
    try:
        print(f"generating seed {args.seed}, scale {args.scale}...", file=sys.stderr, flush=True)
        try:
            server.start()
        except OSError as error:
            print(f"error: cannot serve on {args.host}:{args.port}: {error}", file=sys.stderr)
            return 1
        if args.host not in ("127.0.0.1", "localhost", "::1"):
            print(f"warning: serving on {args.host}, reachable from other machines", file=sys.stderr)
        for name, portal in portals.items():
            prefix = f"{name} " if name else ""
            print(f"{prefix}base_url: {portal.base_url}", flush=True)
            print(f"{prefix}client_id: {portal.client_id}", flush=True)
            print(f"{prefix}client_secret: {portal.client_secret}", flush=True)
            print(f"{prefix}openapi: {portal.base_url}/openapi.json", flush=True)
        print("serving; Ctrl-C to stop", file=sys.stderr, flush=True)
        while not stop.wait(0.5):
            pass
        return 0
    finally:
        server.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
