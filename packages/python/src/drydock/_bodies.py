"""Request bodies and paths both clients send (snake_case options in, the API's JSON out)."""

from __future__ import annotations

import os
from typing import IO, Any, Iterable, Iterator, Literal, Mapping, Sequence, Union

from ._wire import compact, segment
from .types import BatchItemInput, Dataset, NetworkOption, SessionLimits, camel_keys

NetworkArg = Union[NetworkOption, Mapping[str, Any], Literal[False], None]
BatchItemArg = Union[BatchItemInput, Mapping[str, Any], str]
LocalFile = Union[str, "os.PathLike[str]"]


def session_body(
    thread_id: str | None,
    limits: SessionLimits | Mapping[str, Any] | None,
    storage: str | None,
    datasets: Sequence[Dataset | Mapping[str, Any]] | None,
    template: str | None,
    network: NetworkArg,
    tier: str | None = None,
    idle_action: str | None = None,
    from_snapshot: str | None = None,
) -> dict[str, Any]:
    return compact(
        {
            "threadId": thread_id,
            "limits": camel_keys(limits) if limits else None,
            "storage": storage,
            "datasets": [dict(d) for d in datasets] if datasets is not None else None,
            "template": template,
            "network": dict(network) if network else network,
            "tier": tier,
            "idleAction": idle_action,
            "fromSnapshot": from_snapshot,
        }
    )


def fork_body(snapshot_id: str, thread_id: str | None) -> dict[str, Any]:
    """A fork sends only the snapshot and the thread (anything else is INVALID_FORK)."""
    if not isinstance(snapshot_id, str) or not snapshot_id:
        raise ValueError("sessions.fork: `snapshot_id` is a snapshot's id (snp_...).")
    return compact({"fromSnapshot": snapshot_id, "threadId": thread_id})


def run_body(code: str, timeout_ms: int | None, idempotency_key: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code}
    if timeout_ms is not None:
        body["timeoutMs"] = timeout_ms
    if idempotency_key is not None:
        body["idempotencyKey"] = idempotency_key
    return body


def command_body(
    cmd: str | Sequence[str],
    cwd: str | None,
    env: Mapping[str, str] | None,
    stdin: str | None,
    timeout_ms: int | None,
    idempotency_key: str | None,
    background: bool,
) -> dict[str, Any]:
    if isinstance(cmd, str):
        target: dict[str, Any] = {"command": cmd}
    else:
        argv = list(cmd)
        if not all(isinstance(a, str) for a in argv):
            raise TypeError("commands.run: a command is a string (a shell line) or a sequence of strings (argv).")
        target = {"argv": argv}
    return compact(
        {
            **target,
            "cwd": cwd,
            "env": dict(env) if env is not None else None,
            "stdin": stdin,
            "timeoutMs": timeout_ms,
            "idempotencyKey": idempotency_key,
            "background": True if background else None,
        }
    )


def batch_options(
    limits: SessionLimits | Mapping[str, Any] | None,
    timeout_ms: int | None,
    concurrency: int | None,
    idempotency_key: str | None,
    metadata: Mapping[str, Any] | None,
    template: str | None,
    network: NetworkArg,
) -> dict[str, Any]:
    return compact(
        {
            "limits": camel_keys(limits) if limits else None,
            "timeoutMs": timeout_ms,
            "concurrency": concurrency,
            "idempotencyKey": idempotency_key,
            "metadata": dict(metadata) if metadata is not None else None,
            "template": template,
            "network": dict(network) if network else network,
        }
    )


def batch_item(item: BatchItemArg) -> Any:
    """An item as sent: a string is ``{"code": it}``."""
    if isinstance(item, str):
        return {"code": item}
    return item


def batch_items(items: Iterable[BatchItemArg]) -> Iterator[Any]:
    for item in items:
        yield {"code": item} if isinstance(item, str) else item


def session_path(session_id: str) -> str:
    return f"/v1/sessions/{segment(session_id)}"


def snapshot_path(snapshot_id: str) -> str:
    return f"/v1/snapshots/{segment(snapshot_id)}"


def thread_files_path(thread_id: str) -> str:
    return f"/v1/threads/{segment(thread_id)}/files"


def text_or_bytes(data: str | bytes | bytearray | memoryview) -> tuple[bytes, str]:
    """Content to write and its Content-Type (text as UTF-8)."""
    if isinstance(data, str):
        return data.encode("utf-8"), "text/plain; charset=utf-8"
    return bytes(data), "application/octet-stream"


def open_local(source: LocalFile) -> IO[bytes]:
    return open(os.fspath(source), "rb")


def absolute_url(base_url: str, url: str) -> str:
    if url.startswith(("http://", "https://")):
        return url
    origin = base_url.split("/", 3)
    root = "/".join(origin[:3])
    return root + (url if url.startswith("/") else "/" + url)
