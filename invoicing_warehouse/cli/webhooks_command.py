"""`invoicing-warehouse webhooks serve | register | list | remove`: the doorbell's receiver and its subscriptions.

- `serve`: the receiver (pipelines/invoicing/webhooks/receiver.py) on 127.0.0.1:8787 until Ctrl-C / SIGTERM. It needs
  `INVOICING_WEBHOOK_TOKEN` (the key of each portal's door, `/hooks/<door>[/<portal>]`,
  pipelines/invoicing/hook_urls.py) and refuses to start without one; `INVOICING_WEBHOOK_HMAC_SECRET`, when set, makes
  it require `X-Invoicing-Signature`. Hints go to the warehouse's one spool (`hint_spool.spool_location_for`): beside
  `--warehouse` (`data/warehouse.hints.sqlite`), or in the DuckLake's PostgreSQL catalog database when
  `INVOICING_WAREHOUSE_ENGINE=ducklake` (or the database `INVOICING_HINT_SPOOL` names), where the applying runs read, on
  this host or another. The server bounds headers, read time and connections
  (pipelines/invoicing/webhooks/receiver_server.py).
- `register --receiver ROOT | --url URL [--events E ...]`, `list`, `remove --receiver ROOT | --url URL | --id ID`:
  the portal's subscriptions, idempotent, with the write-scope client `sources.invoicing.webhook_client_id` /
  `webhook_client_secret` (pipelines/invoicing/webhooks/subscriptions.py). `--receiver` builds the URL from
  the receiver's root and the portal's door, derived from `INVOICING_WEBHOOK_TOKEN` (no secret on the command
  line), and replaces an older version's URL of the shared token; `--url` is the whole URL, door included. Either is
  printed masked; plain http:// is refused unless it is loopback.
Exit codes: 0 done (also when there was nothing to do), 1 an expected failure (one line on stderr), 2 bad usage.
"""

from __future__ import annotations

import argparse
import logging
import socket
import sqlite3
import sys
from collections.abc import Mapping

from invoicing_warehouse.cli.sync_command import add_portal_arguments, chosen_portals
from invoicing_warehouse.engine.environment.api_settings import WEBHOOK_HMAC_SECRET, WEBHOOK_TOKEN
from invoicing_warehouse.engine.environment.reader import current_environment, environment
from invoicing_warehouse.engine.names import DEFAULT_PORTALS_PATH, DEFAULT_WAREHOUSE_PATH

DEFAULT_PORT = 8787
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `webhooks` group and its four commands."""
    commands = parser.add_subparsers(dest="webhooks_command", required=True, metavar="ACTION")
    serve = commands.add_parser("serve", help="receive deliveries and spool them as hints")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 = any free)")
    serve.add_argument("--warehouse", default=DEFAULT_WAREHOUSE_PATH, metavar="PATH",
                       help=f"the warehouse whose spool (<dir>/<stem>.hints.sqlite) gets the hints "
                            f"(default {DEFAULT_WAREHOUSE_PATH}; a DuckLake's, by INVOICING_WAREHOUSE_ENGINE, "
                            f"in its PostgreSQL catalog database; INVOICING_HINT_SPOOL: that database)")
    serve.add_argument("--portals", default=None, metavar="PATH",
                       help=f"portals file: /hooks/<door>/<name> is accepted for each of its portals "
                            f"(default {DEFAULT_PORTALS_PATH} when it exists; without one, only /hooks/<door>)")
    register = commands.add_parser("register", help="subscribe the receiver's URL (idempotent)")
    where = register.add_mutually_exclusive_group(required=True)
    where.add_argument("--receiver", default=None, metavar="ROOT",
                       help="the receiver's public root, without the token (https://hooks.example.com): the "
                            "URL becomes ROOT/hooks/<door>[/<portal>], the portal's door derived from "
                            "INVOICING_WEBHOOK_TOKEN read from the environment, never from the command line "
                            "(visible in `ps`); an older version's ROOT/hooks/<token>[/<portal>] is replaced")
    where.add_argument("--url", default=None, help="the receiver's whole URL, the portal's door included: "
                                                   "https://HOST/hooks/<door>[/<portal>] (prefer --receiver)")
    register.add_argument("--events", nargs="+", default=None, metavar="EVENT",
                          help="events to subscribe (default: every event the receiver understands)")
    add_portal_arguments(register, every=False)
    listing = commands.add_parser("list", help="the portal's subscriptions (URL tokens masked)")
    add_portal_arguments(listing, every=False)
    remove = commands.add_parser("remove", help="unsubscribe a URL or a subscription id (absent: a note, exit 0)")
    which = remove.add_mutually_exclusive_group(required=True)
    which.add_argument("--url", default=None, help="every subscription of this URL")
    which.add_argument("--receiver", default=None, metavar="ROOT",
                       help="every subscription of ROOT/hooks/<door>[/<portal>] (and of an older version's "
                            "ROOT/hooks/<token>[/<portal>])")
    which.add_argument("--id", default=None, dest="subscription_id", help="the subscription of this id")
    add_portal_arguments(remove, every=False)


def run(args: argparse.Namespace) -> int:
    """Runs the chosen action; returns its exit code."""
    if args.webhooks_command == "serve":
        return serve(args)
    return manage(args)


class ServeRefused(Exception):
    """`webhooks serve` cannot start: `code` is its exit code (2 bad configuration, 1 an unreadable portals
    file), the message one line for stderr (never a secret)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def receiver_settings(args: argparse.Namespace, environ: Mapping[str, str] | None = None):
    """What `serve` receives with: the token and HMAC secret from the environment (checked: L9), the portals,
    and the spool of the configured warehouse (`target_from_env`: the DuckLake's when the engine says so, the
    same path the applying runs use, `hint_spool.spool_location_for`). Raises ServeRefused."""
    from invoicing_warehouse.engine.target import WarehouseConfigError, target_from_env
    from pipelines.invoicing.errors import InvoicingApiError
    from pipelines.invoicing.hook_urls import hmac_secret_problem, token_problem
    from pipelines.invoicing.portals import configured_portals
    from pipelines.invoicing.webhooks.hint_spool import spool_location_for
    from pipelines.invoicing.webhooks.receiver import ReceiverSettings

    settings = environment(environ)
    token = settings.text(WEBHOOK_TOKEN)
    secret = settings.text(WEBHOOK_HMAC_SECRET)
    problem = token_problem(token) or hmac_secret_problem(secret)
    if problem is not None or token is None:
        raise ServeRefused(2, str(problem))
    try:
        target = target_from_env(args.warehouse, environ=environ)
    except WarehouseConfigError as error:
        raise ServeRefused(2, str(error)) from None
    try:
        portals = configured_portals(args.portals or DEFAULT_PORTALS_PATH, required=args.portals is not None)
    except InvoicingApiError as error:
        raise ServeRefused(1, str(error)) from None
    try:
        spool = spool_location_for(target, environ)
    except WarehouseConfigError as error:
        raise ServeRefused(2, str(error)) from None
    return ReceiverSettings(token, spool, frozenset(portals), secret)


def serve(args: argparse.Namespace) -> int:
    """Serves the receiver until interrupted; 2 without a usable token, 1 when it cannot listen."""
    import psycopg2
    import uvicorn

    from pipelines.invoicing.webhooks.receiver import SIGNATURE_HEADER, Receiver
    from pipelines.invoicing.webhooks.receiver_server import server_config

    try:
        settings = receiver_settings(args)
    except ServeRefused as refused:
        print(f"webhooks serve: {refused}", file=sys.stderr)
        return refused.code
    receiver = Receiver(settings)
    portals, secret = settings.portals, settings.hmac_secret
    try:
        receiver.open()
        family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((args.host, args.port))
        listener.listen(2048)  # connections queue from now on, so the address printed below is already good
    except (OSError, sqlite3.Error, psycopg2.Error) as error:
        receiver.close()
        print(f"webhooks serve: cannot start on {args.host}:{args.port} with the spool "
              f"{receiver.settings.spool_path}: {error}", file=sys.stderr)
        return 1
    port = listener.getsockname()[1]
    if args.host not in LOCAL_HOSTS:
        print(f"warning: listening on {args.host}, reachable from other machines", file=sys.stderr)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    print(f"receiving on http://{args.host}:{port}/hooks/*** (portals: {', '.join(sorted(portals))})", flush=True)
    print(f"spool: {receiver.settings.spool_path}", flush=True)
    if secret:
        print(f"deliveries must carry {SIGNATURE_HEADER}: sha256=<HMAC-SHA256 of the body>", flush=True)
    # uvicorn's access log would print the token: off; the receiver logs each delivery with it masked
    config = server_config(receiver.app(), log_level="warning", lifespan="on", timeout_graceful_shutdown=5)
    try:
        uvicorn.Server(config).run(sockets=[listener])
    finally:
        receiver.close()
        listener.close()
    return 0


def _hook_url(args: argparse.Namespace, portal_name: str | None) -> tuple[str | None, str | None, tuple[str, ...]]:
    """The subscription URL the options name (`--url`, or `--receiver` with the environment's token and the
    portal's door, hook_urls.portal_door), why it cannot be used (None when it can), and the URL an older
    version subscribed for it (the shared token where the door now is: `register` replaces it, `remove` removes
    it too). Plain http:// is refused but for loopback: the URL carries the door to the service and every
    delivery carries it back (security review L4)."""
    from pipelines.invoicing.hook_urls import (
        TOKEN_ENV,
        door_of,
        hook_url,
        is_portal_door,
        masked,
        token_problem,
    )
    from pipelines.invoicing.url_policy import url_problem

    url = getattr(args, "url", None)
    receiver = getattr(args, "receiver", None)
    token = current_environment().text(WEBHOOK_TOKEN)
    legacy: tuple[str, ...] = ()
    if receiver is not None:
        problem = token_problem(token)
        if problem is not None or token is None:
            return None, f"--receiver builds the URL from {TOKEN_ENV}: {problem}", ()
        if "/hooks/" in receiver:
            return None, "--receiver is the receiver's root without /hooks/<door> (e.g. https://hooks.example.com)", ()
        url, option = hook_url(receiver, token, portal_name), "--receiver"
        legacy = (f"{receiver.rstrip('/')}/hooks/{token}" + (f"/{portal_name}" if portal_name else ""),)
    else:
        option = "--url"
    if url is None:
        return None, None, ()
    # removing compares URLs only, and must still clear an old plain-http or shared-token subscription away
    if args.webhooks_command != "register":
        return url, None, legacy
    problem = url_problem(url)
    door = door_of(url)
    if problem is None and token and door is not None and not is_portal_door(door, token, portal_name or "default"):
        # the receiver would answer 404 to every delivery, and the service disable the subscription
        problem = (f"does not carry portal {portal_name or 'default'}'s door (HMAC-SHA256 of the portal's name keyed "
                   f"by {TOKEN_ENV}, docs/webhook-receiver.md): use --receiver ROOT, which builds it")
    return url, (f"{option} {masked(url)!r} {problem}" if problem is not None else None), legacy


def manage(args: argparse.Namespace) -> int:
    """register / list / remove on the chosen portal; 1 with one line on stderr for an expected failure.
    Every message that could carry the subscription URL is printed with its token masked."""
    from pipelines.invoicing.errors import InvoicingApiError
    from pipelines.invoicing.hook_urls import masked, scrubbed
    from pipelines.invoicing.webhooks.subscriptions import Subscriptions, check_events, webhook_client

    action = args.webhooks_command
    try:
        events = check_events(args.events) if action == "register" else []
    except ValueError as error:
        print(f"webhooks {action}: {error}", file=sys.stderr)
        return 2
    url: str | None = None
    legacy: tuple[str, ...] = ()
    try:
        (portal,) = chosen_portals(args)
        url, problem, legacy = _hook_url(args, portal.name if portal.from_file else None)
        if problem is not None:
            print(f"webhooks {action}: {problem}", file=sys.stderr)
            return 2
        with webhook_client(portal) as client:
            subscriptions = Subscriptions(client, portal)
            if action == "list":
                found = subscriptions.current()
                for subscription in found:
                    print(subscription.line())
                print(f"{len(found)} subscription(s) of portal {portal.name}", file=sys.stderr)
            elif action == "register":
                assert url is not None  # argparse requires --receiver or --url, and _hook_url built it
                kept, outcome, stale = subscriptions.register(url, events, replaces=legacy)
                print(f"{outcome}: {kept.line()}")
                for subscription in stale:
                    print(f"removed older subscription of this portal's URL: {subscription.line()}")
            else:
                removed = subscriptions.remove(url=url, subscription_id=args.subscription_id, also=legacy)
                for subscription in removed:
                    print(f"removed: {subscription.line()}")
                if not removed:
                    what = f"of {masked(url)}" if url else f"with id {args.subscription_id}"
                    print(f"note: no subscription {what} on portal {portal.name}; nothing to remove")
    except InvoicingApiError as error:
        # the API's message may quote the URL it refused, token and all
        message = scrubbed(str(error), url)
        for old_url in legacy:  # the shared token, in an older version's URL
            message = scrubbed(message, old_url)
        print(f"webhooks {action} failed: {message}", file=sys.stderr)
        return 1
    return 0
