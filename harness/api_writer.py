"""The application user of a test: changes records upstream through the API itself (write scope),
so that the next incremental window holds them."""

from __future__ import annotations

from typing import Self

import httpx


class ApiWriter:
    """A minimal write-scope client of the Invoicing API (no retries: faults are off when it runs)."""

    def __init__(self, base_url: str, client_id: str, client_secret: str) -> None:
        self._client = httpx.Client(base_url=base_url.rstrip("/") + "/", timeout=30.0)
        answer = self._client.post(
            "oauth2/token",
            data={"grant_type": "client_credentials", "scope": "write"},
            auth=(client_id, client_secret),
        )
        answer.raise_for_status()
        self.token = answer.json()["access_token"]
        self._client.headers["Authorization"] = f"Bearer {self.token}"

    def get(self, path: str, **params) -> dict | list:
        """GET `path` and return its `data`."""
        answer = self._client.get(path.lstrip("/"), params=params)
        answer.raise_for_status()
        return answer.json()["data"]

    def patch(self, path: str, body: dict) -> dict:
        """PATCH `path` with `body` and return the record."""
        answer = self._client.patch(path.lstrip("/"), json=body)
        answer.raise_for_status()
        return answer.json()["data"]

    def post(self, path: str, body: dict | None = None) -> dict:
        """POST `path` with `body` and return the record."""
        answer = self._client.post(path.lstrip("/"), json=body)
        answer.raise_for_status()
        return answer.json().get("data")

    def close(self) -> None:
        """Closes the connection pool."""
        self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
