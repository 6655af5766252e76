"""HTTP errors as types, each rendered in OpenAI's error shape.

Every error the server answers is one of these: the class decides the status code, the ``type`` and
``code`` fields, and whether OpenAI clients should retry (the ``x-should-retry`` header, which the
official clients obey). The body is always ``{"error": {"message", "type", "param", "code"}}`` —
never a stack trace.
"""

from __future__ import annotations

from typing import Any, ClassVar


class APIError(Exception):
    """Base of every error answered to a client."""

    status: ClassVar[int] = 500
    type: ClassVar[str] = "server_error"
    code: ClassVar[str | None] = None
    retry: ClassVar[bool | None] = None
    """True/False: tell clients to retry or not (``x-should-retry``); None: let them decide by status."""

    def __init__(self, message: str, *, param: str | None = None, trace_id: str | None = None):
        super().__init__(message)
        self.message = message
        self.param = param
        self.trace_id = trace_id

    def body(self) -> dict[str, Any]:
        """The JSON body: OpenAI's error shape."""
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}

    def headers(self) -> dict[str, str]:
        """Headers that go with the error."""
        out: dict[str, str] = {}
        if self.retry is not None:
            out["x-should-retry"] = "true" if self.retry else "false"
        if self.trace_id:
            out["x-memdoor-trace-id"] = self.trace_id
        return out


class InvalidRequest(APIError):
    """A request the server understands but cannot serve (``n`` > 1, no text in the conversation)."""

    status = 400
    type = "invalid_request_error"
    code = "invalid_request"
    retry = False


class Unauthorized(APIError):
    """No bearer token, or the wrong one."""

    status = 401
    type = "invalid_request_error"
    code = "invalid_api_key"
    retry = False

    def headers(self) -> dict[str, str]:
        return {**super().headers(), "www-authenticate": "Bearer"}


class NotFound(APIError):
    """No such route."""

    status = 404
    type = "invalid_request_error"
    code = "not_found"
    retry = False


class ModelNotFound(NotFound):
    """The model id names no team this server offers."""

    code = "model_not_found"


class MethodNotAllowed(APIError):
    """A route exists but not with this HTTP method."""

    status = 405
    type = "invalid_request_error"
    code = "method_not_allowed"
    retry = False


class InvalidBody(APIError):
    """The body is not JSON, or not a chat completion request (``param`` names the field): bad input, a 400
    as OpenAI answers it (the project's rule for bad input; it was a 422)."""

    status = 400
    type = "invalid_request_error"
    code = "invalid_body"
    retry = False


class UnsupportedMediaType(APIError):
    """The body is declared as something else than JSON (``content-type`` other than application/json)."""

    status = 415
    type = "invalid_request_error"
    code = "unsupported_media_type"
    retry = False


class PayloadTooLarge(APIError):
    """The body is larger than the server accepts."""

    status = 413
    type = "invalid_request_error"
    code = "request_too_large"
    retry = False


class QueueFull(APIError):
    """Every run slot is busy and the waiting queue is full."""

    status = 429
    type = "rate_limit_error"
    code = "queue_full"
    retry = True

    def __init__(self, message: str, *, retry_after_s: int = 0):
        super().__init__(message)
        self.retry_after_s = retry_after_s

    def headers(self) -> dict[str, str]:
        return {**super().headers(), "retry-after": str(self.retry_after_s)}


class DeadlineExceeded(APIError):
    """The request's time limit passed before the team finished (queue wait included)."""

    status = 504
    type = "timeout_error"
    code = "timeout"
    retry = False


class BudgetSpent(APIError):
    """The team spent the request's token budget before it finished."""

    status = 504
    type = "timeout_error"
    code = "budget_exceeded"
    retry = False


class NoSolution(APIError):
    """The team produced no code: its models failed, or none answered with a code block."""

    status = 502
    type = "server_error"
    code = "no_solution"
    retry = False


class InternalError(APIError):
    """A bug: logged on the server, answered without details."""

    status = 500
    type = "server_error"
    code = "internal_error"
