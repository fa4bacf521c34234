"""The API's error: raised anywhere in the sandbox, rendered as the service's error body."""

from __future__ import annotations


class ApiError(Exception):
    """An error answer: `{"error": message, "code": status, "details": [...]}` (api-facts.md)."""

    def __init__(self, status: int, message: str, details: list | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.details = details

    def body(self) -> dict:
        """The JSON error body."""
        body: dict = {"error": self.message, "code": self.status}
        if self.details:
            body["details"] = self.details
        return body


def not_found(path: str) -> ApiError:
    """The service's 404 for an unknown or foreign id."""
    return ApiError(404, "not found", [{"path": path, "message": "not found"}])


def bad_request(message: str, details: list | None = None) -> ApiError:
    """A 400 with the service's message."""
    return ApiError(400, message, details)


def conflict(message: str) -> ApiError:
    """A 409 (uniqueness or attached records)."""
    return ApiError(409, message)
