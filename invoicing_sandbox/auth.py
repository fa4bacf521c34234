"""OAuth 2.0 client credentials: the token store, the token grant, and the per-route scope check.

Tokens are 40 lowercase hex characters (as the real service issues), expire by the sandbox clock after
`config.served_token_lifetime_s()` (the contract profile's lifetime, else `token_lifetime_s`), and can be
revoked after `config.revoke_token_after_requests` requests (a fault the client must survive by fetching a
new token once on 401).
"""

from __future__ import annotations

import base64
import binascii
import secrets
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from fastapi import Request, Security
from fastapi.security import OAuth2, SecurityScopes

from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.errors import ApiError
from invoicing_sandbox.faults import SandboxStats

INSUFFICIENT_SCOPE = "The request is not authorized because the authorized scope is insufficient"
KNOWN_SCOPES = ("read", "write")


class OAuthError(Exception):
    """A token-endpoint failure, rendered as the OAuth2 body `{"error", "error_description"}`."""

    def __init__(self, status: int, error: str, description: str) -> None:
        super().__init__(description)
        self.status = status
        self.error = error
        self.description = description

    def body(self) -> dict:
        """The OAuth2 error body (RFC 6749 section 5.2)."""
        return {"error": self.error, "error_description": self.description}


@dataclass
class AccessToken:
    """One issued bearer token."""

    value: str
    scopes: frozenset[str]
    expires_at: datetime
    requests: int = 0
    revoked: bool = False
    scope_text: str = field(default="")


class TokenStore:
    """Issues and checks bearer tokens for the sandbox's one API client."""

    def __init__(self, config: SandboxConfig, clock: Clock, stats: SandboxStats) -> None:
        self.config = config
        self.clock = clock
        self.stats = stats
        self._lock = threading.Lock()
        self._tokens: dict[str, AccessToken] = {}

    def issue(self, scope: str) -> AccessToken:
        """Issues a token for `scope` ("read", "write" or "read write"); no credential check (tests)."""
        scopes = parse_scope(scope, self.config.allowed_scopes)
        token = AccessToken(
            value=secrets.token_hex(20),
            scopes=scopes,
            expires_at=self.clock.now() + timedelta(seconds=self.config.served_token_lifetime_s()),
            scope_text=" ".join(s for s in KNOWN_SCOPES if s in scopes),
        )
        with self._lock:
            self._tokens[token.value] = token
        self.stats.bump("tokens_issued")
        return token

    def grant(self, authorization: str | None, form: dict[str, str]) -> AccessToken:
        """The client-credentials grant: checks HTTP Basic credentials and the form; raises OAuthError."""
        client_id, client_secret = _basic_credentials(authorization)
        if not (
            secrets.compare_digest(client_id, self.config.client_id)
            and secrets.compare_digest(client_secret, self.config.client_secret)
        ):
            raise OAuthError(401, "invalid_client", "client authentication failed")
        grant_type = form.get("grant_type")
        if not grant_type:
            raise OAuthError(400, "invalid_request", "grant_type is required")
        if grant_type != "client_credentials":
            raise OAuthError(400, "unsupported_grant_type", "only client_credentials is supported")
        return self.issue(form.get("scope") or "")

    def revoke(self, value: str) -> None:
        """Revokes a token: its next use answers 401."""
        with self._lock:
            if value in self._tokens:
                self._tokens[value].revoked = True

    def peek(self, authorization: str | None) -> AccessToken | None:
        """The valid token of an `Authorization` header, without counting a use; None otherwise."""
        scheme, _, value = (authorization or "").partition(" ")
        if scheme.lower() != "bearer":
            return None
        with self._lock:
            token = self._tokens.get(value.strip())
        if token is None or token.revoked or self.clock.now() >= token.expires_at:
            return None
        return token

    def authenticate(self, authorization: str | None) -> AccessToken:
        """The token of a request's `Authorization: Bearer` header, counted; raises ApiError 401."""
        scheme, _, value = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise ApiError(401, "missing or malformed bearer token")
        with self._lock:
            token = self._tokens.get(value.strip())
            if token is None:
                raise ApiError(401, "invalid token")
            if token.revoked:
                raise ApiError(401, "token revoked")
            if self.clock.now() >= token.expires_at:
                raise ApiError(401, "token expired")
            token.requests += 1
            limit = int(self.config.revoke_token_after_requests or 0)
            if limit > 0 and token.requests > limit:
                token.revoked = True
                self.stats.bump("token_revoked")
                raise ApiError(401, "token revoked")
        return token


def parse_scope(scope: str, allowed: tuple[str, ...]) -> frozenset[str]:
    """The scopes of a space-separated scope string; raises OAuthError invalid_scope."""
    words = scope.split()
    if not words:
        raise OAuthError(400, "invalid_scope", "scope is required: read, write or 'read write'")
    unknown = [w for w in words if w not in KNOWN_SCOPES]
    if unknown:
        raise OAuthError(
            400, "invalid_scope", f"unknown scope {unknown[0]!r}: use read, write or 'read write'"
        )
    refused = [w for w in words if w not in allowed]
    if refused:
        raise OAuthError(400, "invalid_scope", f"scope {refused[0]!r} is not allowed for this client")
    return frozenset(words)


def _basic_credentials(authorization: str | None) -> tuple[str, str]:
    scheme, _, encoded = (authorization or "").partition(" ")
    if scheme.lower() != "basic" or not encoded:
        raise OAuthError(401, "invalid_client", "HTTP Basic client credentials are required")
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as error:
        raise OAuthError(401, "invalid_client", "malformed HTTP Basic credentials") from error
    client_id, sep, client_secret = decoded.partition(":")
    if not sep:
        raise OAuthError(401, "invalid_client", "malformed HTTP Basic credentials")
    return client_id, client_secret


class BearerToken(OAuth2):
    """The bearer-token check every operation depends on; as a FastAPI security scheme it also documents
    the `oauth2` client-credentials scheme and each operation's scope in the OpenAPI document."""

    def __init__(self) -> None:
        super().__init__(
            flows={
                "clientCredentials": {
                    "tokenUrl": "/api/v2/oauth2/token",
                    "scopes": {"read": "read operations", "write": "read and write operations"},
                }
            },
            scheme_name="oauth2",
            auto_error=False,
        )

    # async: a cheap check under a short lock; as a sync dependency it would cost a thread hop per request.
    # FastAPI injects by this signature (the operation's scopes in, the token out), so it must differ from
    # OAuth2's `(request) -> str | None`: the override is deliberate.
    async def __call__(  # type: ignore[override]
        self, request: Request, security_scopes: SecurityScopes
    ) -> AccessToken:
        store: TokenStore = request.app.state.tokens
        token = store.authenticate(request.headers.get("authorization"))
        request.state.token_expire_at = token.expires_at
        required = set(security_scopes.scopes)
        if _listing_webhooks_to_read_scope(request):
            required = {"read"}
        if "write" not in token.scopes and not required <= token.scopes:
            raise ApiError(403, INSUFFICIENT_SCOPE)
        return token


def _listing_webhooks_to_read_scope(request: Request) -> bool:
    """GET /webhooks under the contract switch `webhooks_listed_to_read_scope`: a `read` token suffices."""
    return (request.method == "GET" and request.url.path.endswith("/webhooks")
            and request.app.state.config.contract.webhooks_listed_to_read_scope)


BEARER = BearerToken()


def require_scope(scope: str):
    """A FastAPI dependency: the request's token must allow `scope` ("read" or "write").

    `write` allows read and write (spec Authentication 5). The token's expiry is left in
    `request.state` so that the edge middleware can send `AccessToken-ExpireAt`.
    """
    return Security(BEARER, scopes=[scope])
