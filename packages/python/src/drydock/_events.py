"""The streamed answers' events, read the same way by both clients: each reader takes
``(event, data)`` pairs and says what to hand to the caller's callbacks."""

from __future__ import annotations

from typing import Any

from ._wire import event_payload, platform_error, stream_ended
from .errors import DrydockError
from .types import Batch, BatchItem, BatchItemEvent, Execution, ProcessExit

# Connections cut mid-stream followed again in a row before giving up (template logs).
MAX_CUTS = 3


class RunEvents:
    """A streamed run or command: ``stdout``/``stderr`` ``{text}``, then ``done`` (the
    record). A platform failure after the stream began is an ``error`` event with a
    ``code``; a Python exception's ``error`` event is part of the record."""

    __slots__ = ("what", "record", "failure")

    def __init__(self, what: str) -> None:
        self.what = what
        self.record: dict[str, Any] | None = None
        self.failure: DrydockError | None = None

    def take(self, event: str, data: str) -> tuple[str, str] | None:
        if event == "stdout" or event == "stderr":
            return event, str(event_payload(data).get("text", ""))
        if event == "done":
            self.record = event_payload(data)
        elif event == "error":
            self.failure = platform_error(event_payload(data)) or self.failure
        return None

    def result(self) -> Execution:
        if self.record is not None:
            return Execution.from_json(self.record)
        raise self.failure or stream_ended(self.what)


class ProcessEvents:
    """A background process's output: ``stdout``/``stderr``, then ``exit``."""

    __slots__ = ("process_id", "exit", "failure")

    def __init__(self, process_id: str) -> None:
        self.process_id = process_id
        self.exit: ProcessExit | None = None
        self.failure: DrydockError | None = None

    def take(self, event: str, data: str) -> tuple[str, str] | None:
        if event == "stdout" or event == "stderr":
            return event, str(event_payload(data).get("text", ""))
        if event == "exit":
            payload = event_payload(data)
            self.exit = ProcessExit(payload.get("exitCode"), payload.get("signal"))
        elif event == "error":
            self.failure = platform_error(event_payload(data), 502) or self.failure
        return None

    def result(self) -> ProcessExit:
        if self.exit is not None:
            return self.exit
        raise self.failure or DrydockError(
            "STREAM_ENDED", f"The output stream of process {self.process_id} ended before its exit.", 502
        )


class BatchEvents:
    """A batch's events: ``progress`` (the batch), ``item`` (one ended), ``done``."""

    __slots__ = ("done",)

    def __init__(self) -> None:
        self.done: Batch | None = None

    def take(self, event: str, data: str) -> tuple[str, Batch | BatchItemEvent] | None:
        if event == "progress":
            return "progress", Batch.from_json(event_payload(data))
        if event == "item":
            return "item", BatchItemEvent.from_json(event_payload(data))
        if event == "done":
            self.done = Batch.from_json(event_payload(data))
        elif event == "error":
            failure = platform_error(event_payload(data))
            if failure is not None:
                raise failure
        return None


class TemplateLogEvents:
    """A build log: ``log`` ``{line}`` from the first line, then ``done`` ``{status, error}``.
    A stream followed again starts from the first line: ``seen`` skips what was given."""

    __slots__ = ("seen", "index", "status", "error")

    def __init__(self) -> None:
        self.seen = 0
        self.index = 0
        self.status: str | None = None
        self.error: str | None = None

    def restart(self) -> None:
        self.index = 0

    def take(self, event: str, data: str) -> str | None:
        if event == "log":
            self.index += 1
            if self.index <= self.seen:
                return None
            self.seen += 1
            return str(event_payload(data).get("line", ""))
        if event == "done":
            payload = event_payload(data)
            self.status = str(payload.get("status"))
            error = payload.get("error")
            self.error = str(error) if error is not None else None
        elif event == "error":
            failure = platform_error(event_payload(data))
            if failure is not None:
                raise failure
        return None


FINISHED_ITEM_STATUSES = frozenset({"ok", "error", "timeout", "memory", "killed", "cancelled"})
# Items read per page while following a batch's results, and the wait between pages
# that brought nothing new.
FOLLOW_PAGE = 500
FOLLOW_POLL_S = 0.25


class ResultsFrontier:
    """Following a running batch's results: each item is handed over once, as soon as a
    page shows it finished. Pages start at the frontier, the first index not yet given
    (items finish about in index order, so a page covers the running ones); the indices
    given past it are remembered until the frontier passes them."""

    __slots__ = ("frontier", "_given")

    def __init__(self) -> None:
        self.frontier = 0
        self._given: set[int] = set()

    def take(self, page: list[BatchItem]) -> list[BatchItem]:
        fresh = [i for i in page if i.status in FINISHED_ITEM_STATUSES and i.index >= self.frontier and i.index not in self._given]
        self._given.update(i.index for i in fresh)
        while self.frontier in self._given:
            self._given.discard(self.frontier)
            self.frontier += 1
        return fresh

    def complete(self, total: int) -> bool:
        return self.frontier >= total
