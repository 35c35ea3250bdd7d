"""The one exception the SDK raises for what the platform refused or could not do."""

from __future__ import annotations

from typing import Any

__all__ = ["DrydockError", "TemplateBuildError"]


class DrydockError(Exception):
    """An error answer of the platform, or a failure to reach it.

    ``code`` is the platform's stable code (``FILE_NOT_FOUND``, ``SESSION_ENDED``,
    ``RATE_LIMITED``, ...; docs/api.md lists them), or one of the SDK's own:
    ``NETWORK_ERROR`` (no answer; ``status`` 0), ``INVALID_RESPONSE`` (an answer the SDK
    could not read), ``HTTP_ERROR`` (an error answer without the platform's envelope).
    ``request_id`` is the answer's ``X-Request-Id``: quote it to the operator.
    """

    code: str
    message: str
    status: int
    details: dict[str, Any] | None
    request_id: str | None

    def __init__(
        self,
        code: str,
        message: str,
        status: int = 0,
        details: dict[str, Any] | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.details = details
        self.request_id = request_id

    def __str__(self) -> str:
        where = f"HTTP {self.status}" if self.status else "no answer"
        request = f", request {self.request_id}" if self.request_id else ""
        return f"{self.code}: {self.message} ({where}{request})"

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(code={self.code!r}, message={self.message!r}, status={self.status!r}, "
            f"details={self.details!r}, request_id={self.request_id!r})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # Picklable (multiprocessing, concurrent.futures), whatever the subclass.
        return (DrydockError, (self.code, self.message, self.status, self.details, self.request_id))


class TemplateBuildError(DrydockError):
    """A template version whose build ended ``failed`` (``TemplateBuild.wait()``).

    ``build_error`` is the platform's reason: it names the failing step and ends with
    its output.
    """

    template: str
    version: int
    build_error: str

    def __init__(self, template: str, version: int, build_error: str) -> None:
        super().__init__(
            "TEMPLATE_BUILD_FAILED",
            f"Template {template}:{version} failed to build: {build_error}",
            0,
            {"template": template, "version": version},
        )
        self.template = template
        self.version = version
        self.build_error = build_error

    def __reduce__(self) -> tuple[Any, ...]:
        return (TemplateBuildError, (self.template, self.version, self.build_error))
