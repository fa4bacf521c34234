"""The receiver's delivery URL: `/hooks/<door>` (portal `default`) or `/hooks/<door>/<portal name>`.

A door per portal: `<door>` is HMAC-SHA256(key = the token `INVOICING_WEBHOOK_TOKEN`, message = the portal's
name), in lowercase hex (`portal_door`). A portal's subscription URL is visible to that portal's users (its
webhook settings), so with the token itself in every URL one portal's users could ring every other portal's
doorbell and spend its API budget (security review 2, M1); a door opens one portal only, and the token never
leaves the host. Compute one by hand: `printf %s acme | openssl dgst -sha256 -hmac "$INVOICING_WEBHOOK_TOKEN"`.

The token and the doors are the only things that keep strangers from ringing (deliveries are unsigned), so they
are secrets like a client secret: every log line, message and listing shows these URLs with the door masked
(`/hooks/***/acme`).
"""

from __future__ import annotations

import hashlib
import hmac
import re

from invoicing_warehouse.engine.environment.api_settings import WEBHOOK_HMAC_SECRET, WEBHOOK_TOKEN
from invoicing_warehouse.engine.names import DEFAULT_PORTAL

HOOKS_PREFIX = "/hooks/"
TOKEN_ENV = WEBHOOK_TOKEN.name
HMAC_SECRET_ENV = WEBHOOK_HMAC_SECRET.name
# The token sits in a URL path: URL-safe characters only, and long enough not to be guessed.
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_.~-]+")
# 32 characters: what `secrets.token_urlsafe(24)` makes (192 bits). The token is the only lock on an unsigned
# doorbell and leaks easily (proxy logs, `ps`), so a short or repetitive one is refused when the receiver starts.
MIN_TOKEN_LENGTH = 32
MIN_DISTINCT_CHARACTERS = 8  # a random 32-character token has ~20; `aaaa...` or `abababab...` is not a secret
MIN_HMAC_SECRET_LENGTH = 32
MASK = "***"
_TOKEN_IN_PATH = re.compile(r"(/hooks/)[^/?#]*")


def token_problem(token: str | None) -> str | None:
    """Why `token` cannot be the receiver's token (None when it can); never repeats the token."""
    make_one = "make one with: python -c 'import secrets; print(secrets.token_urlsafe(32))'"
    if not token:
        return f"{TOKEN_ENV} is not set; the receiver needs a secret path token ({make_one})"
    if not TOKEN_PATTERN.fullmatch(token):
        return f"{TOKEN_ENV} must hold only URL-safe characters (A-Z a-z 0-9 _ . ~ -); {make_one}"
    if len(token) < MIN_TOKEN_LENGTH:
        return f"{TOKEN_ENV} is {len(token)} characters; use at least {MIN_TOKEN_LENGTH} ({make_one})"
    if len(set(token)) < MIN_DISTINCT_CHARACTERS:
        return (f"{TOKEN_ENV} repeats too few characters ({len(set(token))} distinct) to be a secret; "
                f"use a random one ({make_one})")
    return None


def hmac_secret_problem(secret: str | None) -> str | None:
    """Why `secret` cannot be the receiver's HMAC secret (None when it can, or when none is set); never
    repeats the secret."""
    if secret is None or secret == "":
        return None
    if len(secret) < MIN_HMAC_SECRET_LENGTH or len(set(secret)) < MIN_DISTINCT_CHARACTERS:
        return (f"{HMAC_SECRET_ENV} is too short or too repetitive; use at least {MIN_HMAC_SECRET_LENGTH} random "
                f"characters (python -c 'import secrets; print(secrets.token_urlsafe(32))')")
    return None


def masked(url_or_path: str) -> str:
    """`url_or_path` with the token of `/hooks/<token>` replaced by `***` (anything else unchanged)."""
    return _TOKEN_IN_PATH.sub(lambda match: match.group(1) + MASK, url_or_path)


def portal_door(token: str, portal: str | None) -> str:
    """The path secret of `portal`'s deliveries (None: the portal `default`): HMAC-SHA256(token, portal name),
    64 lowercase hex characters. Another portal's door cannot be derived from it without the token."""
    return hmac.new(token.encode(), (portal or DEFAULT_PORTAL).encode(), hashlib.sha256).hexdigest()


def is_portal_door(given: str, token: str, portal: str) -> bool:
    """Whether `given` (a path's secret) is `portal`'s door (constant-time compare)."""
    return hmac.compare_digest(given.encode(), portal_door(token, portal).encode())


def hook_url(receiver: str, token: str, portal: str | None) -> str:
    """The delivery URL of the receiver served at `receiver` (scheme, host and any path prefix, no secret):
    `<receiver>/hooks/<door>` for the portal `default` (None), `<receiver>/hooks/<door>/<portal>` otherwise,
    `<door>` = `portal_door(token, portal)`. Built from the token of the environment, so that neither the token
    nor a door needs to be typed on a command line (visible to every local user in `ps`)."""
    return f"{receiver.rstrip('/')}{HOOKS_PREFIX}{portal_door(token, portal)}" + (f"/{portal}" if portal else "")


def door_of(url: str) -> str | None:
    """The secret of `url`'s `/hooks/<secret>` path (None when it has none)."""
    match = _TOKEN_IN_PATH.search(url)
    return match.group(0)[len(HOOKS_PREFIX):] if match else None


def scrubbed(text: str, url: str | None) -> str:
    """`text` with every `/hooks/<token>` masked and, when `url` holds a token, that token masked wherever it
    appears (an API message may quote it without its path)."""
    text = masked(text)
    token = door_of(url or "") or ""
    return text.replace(token, MASK) if len(token) >= 4 else text
