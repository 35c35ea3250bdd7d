"""Typed results: the platform's JSON answers as dataclasses with snake_case fields.

Timestamps are kept as the ISO-8601 strings the platform sends (``created_at``);
``datetime.fromisoformat`` reads them. Fields the platform adds later are ignored until
the SDK names them. Options the SDK sends are TypedDicts with snake_case keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, TypedDict

__all__ = [
    "Artifact",
    "ArchiveUpload",
    "Batch",
    "BatchCounts",
    "BatchItem",
    "BatchItemEvent",
    "BatchItemInput",
    "BatchLimits",
    "BatchPage",
    "CommandResult",
    "Connection",
    "Dataset",
    "EditResult",
    "EffectiveLimits",
    "Execution",
    "ExecutionFiles",
    "ExecutionInterrupt",
    "ExecutionStatus",
    "FileEntry",
    "FileInfo",
    "GrepCount",
    "GrepMatch",
    "GrepMode",
    "GrepResult",
    "NetworkOption",
    "NetworkPolicy",
    "ProcessExit",
    "ProcessInfo",
    "ProcessSignal",
    "PythonError",
    "RichResult",
    "SandboxTier",
    "SessionDataset",
    "SessionInfo",
    "SessionLimits",
    "SessionNetwork",
    "SignedUrl",
    "SkippedPath",
    "Snapshot",
    "Template",
    "TemplateLatest",
    "TemplateSummary",
    "TemplateVersion",
]

Json = dict[str, Any]

ExecutionStatus = Literal["queued", "running", "ok", "error", "timeout", "memory", "killed"]
ProcessSignal = Literal["SIGINT", "SIGTERM", "SIGKILL", "SIGHUP"]
GrepMode = Literal["files_with_matches", "content", "count"]
SandboxTier = Literal["runc", "gvisor"]
"""A session's isolation tier: only ``gvisor`` sessions hibernate and are snapshotted."""


# ---------------------------------------------------------------------------------------
# Options (what the SDK sends)


class SessionLimits(TypedDict, total=False):
    """A session's limits, clamped to the tenant's maxima."""

    memory_mb: int
    cpus: float
    timeout_ms: int


BatchLimits = SessionLimits


class Dataset(TypedDict):
    """An operator's dataset for ``sessions.create(datasets=[...])``."""

    name: str
    mode: Literal["local_ro", "staged"]


class NetworkOption(TypedDict):
    """``network={"allow": [...]}``: the hosts a session's code may reach."""

    allow: list[str]


class BatchItemInput(TypedDict, total=False):
    """One batch item: ``code`` (required), ``files`` put in /session first, your ``id``."""

    code: str
    files: dict[str, str]
    id: str


# ---------------------------------------------------------------------------------------
# Sessions


@dataclass(slots=True)
class EffectiveLimits:
    memory_mb: int
    cpus: float
    timeout_ms: int
    pids: int | None = None
    session_disk_mb: int | None = None
    tmp_disk_mb: int | None = None
    max_output_bytes: int | None = None

    @classmethod
    def from_json(cls, d: Json) -> EffectiveLimits:
        return cls(
            d["memoryMb"],
            d["cpus"],
            d["timeoutMs"],
            d.get("pids"),
            d.get("sessionDiskMb"),
            d.get("tmpDiskMb"),
            d.get("maxOutputBytes"),
        )


@dataclass(slots=True)
class SessionDataset:
    name: str
    mode: str

    @classmethod
    def from_json(cls, d: Json) -> SessionDataset:
        return cls(d["name"], d["mode"])


@dataclass(slots=True)
class NetworkPolicy:
    """A session's network policy as the platform stores it (normalized: lower case)."""

    allow: list[str]

    @classmethod
    def from_json(cls, d: Json | None) -> NetworkPolicy | None:
        return None if d is None else cls(list(d.get("allow") or []))


@dataclass(slots=True)
class SessionInfo:
    """A session's state: ``status`` is ``starting``, ``ready``, ``lost``, ``hibernated``
    (checkpointed, no container: its next run resumes it) or ``ended``.

    ``tier`` is ``runc`` or ``gvisor``; ``hibernated_at`` says since when it is hibernated
    (None when it is not); ``idle_action`` is what it comes to when idle (``hibernate``,
    ``end``; None: the deployment's default).
    """

    id: str
    thread_id: str
    status: str
    worker_id: str | None
    limits: EffectiveLimits | None
    storage: str
    datasets: list[SessionDataset]
    template: str | None
    network: NetworkPolicy | None
    created_at: str
    last_used_at: str | None
    expires_at: str | None
    ended_at: str | None
    end_reason: str | None
    tier: str = "runc"
    hibernated_at: str | None = None
    idle_action: str | None = None

    @property
    def hibernated(self) -> bool:
        return self.status == "hibernated"

    @classmethod
    def from_json(cls, d: Json) -> SessionInfo:
        limits = d.get("limits")
        return cls(
            d["id"],
            d["threadId"],
            d["status"],
            d.get("workerId"),
            EffectiveLimits.from_json(limits) if limits else None,
            d.get("storage", "tmpfs"),
            [SessionDataset.from_json(x) for x in d.get("datasets") or ()],
            d.get("template"),
            NetworkPolicy.from_json(d.get("network")),
            d["createdAt"],
            d.get("lastUsedAt"),
            d.get("expiresAt"),
            d.get("endedAt"),
            d.get("endReason"),
            d.get("tier") or "runc",
            d.get("hibernatedAt"),
            d.get("idleAction"),
        )


@dataclass(slots=True)
class Snapshot:
    """A snapshot of a gvisor session between runs (its variables, processes and files),
    to fork sessions from with ``sessions.fork(snapshot.id)``. ``size_bytes`` is what it
    stores (compressed), counted against the tenant's snapshot quota."""

    id: str
    session_id: str
    tier: str
    size_bytes: int
    created_at: str
    expires_at: str | None

    @classmethod
    def from_json(cls, d: Json) -> Snapshot:
        return cls(d["id"], d["sessionId"], d.get("tier") or "gvisor", d.get("sizeBytes", 0), d["createdAt"], d.get("expiresAt"))


# ---------------------------------------------------------------------------------------
# Executions and commands


@dataclass(slots=True)
class RichResult:
    """The value of a run's trailing expression: ``text`` is its ``repr()``.

    ``str(result)`` is ``text`` (``""`` when there is none), so
    ``print(run.result)`` prints ``42`` for ``6 * 7``.
    """

    text: str | None = None
    html: str | None = None
    png: str | None = None
    """A base64 PNG (a matplotlib figure)."""
    json: Any = None

    @classmethod
    def from_json(cls, d: Json | None) -> RichResult | None:
        if d is None:
            return None
        return cls(d.get("text"), d.get("html"), d.get("png"), d.get("json"))

    def __str__(self) -> str:
        return self.text or ""


@dataclass(slots=True)
class PythonError:
    """A Python exception raised by the code (``name`` is e.g. ``ZeroDivisionError``)."""

    name: str
    value: str
    traceback: str

    @classmethod
    def from_json(cls, d: Json | None) -> PythonError | None:
        if d is None:
            return None
        return cls(d.get("name", ""), d.get("value", ""), d.get("traceback", ""))


@dataclass(slots=True)
class SkippedPath:
    path: str
    reason: str

    @classmethod
    def from_json(cls, d: Json) -> SkippedPath:
        return cls(d["path"], d["reason"])


@dataclass(slots=True)
class ExecutionFiles:
    """What a run did to the thread's files, in thread paths (``/out/a.csv``)."""

    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    skipped: list[SkippedPath] = field(default_factory=list)
    truncated: bool = False

    @classmethod
    def from_json(cls, d: Json | None) -> ExecutionFiles:
        if not d:
            return cls()
        skipped = d.get("skipped")
        return cls(
            list(d.get("changed") or ()),
            list(d.get("deleted") or ()),
            [SkippedPath.from_json(x) for x in skipped] if skipped else [],
            bool(d.get("truncated", False)),
        )


@dataclass(slots=True)
class Artifact:
    """A file the code left under /session/artifacts/, stored by the platform."""

    id: str
    name: str
    path: str
    size: int
    mime: str
    sha256: str
    thread_id: str | None
    session_id: str | None
    execution_id: str | None
    created_at: str
    expires_at: str | None
    url: str
    batch_id: str | None = None
    batch_item: int | None = None

    @classmethod
    def from_json(cls, d: Json) -> Artifact:
        return cls(
            d["id"],
            d["name"],
            d["path"],
            d["size"],
            d["mime"],
            d["sha256"],
            d.get("threadId"),
            d.get("sessionId"),
            d.get("executionId"),
            d["createdAt"],
            d.get("expiresAt"),
            d.get("url", ""),
            d.get("batchId"),
            d.get("batchItem"),
        )


@dataclass(slots=True)
class Execution:
    """The record of a run (``kind == "code"``) or a command (``kind == "command"``).

    ``status`` is about the code: a Python exception is ``status == "error"`` with
    ``error`` set, not a raised exception. ``result`` is the trailing expression's value
    (``run.result.text == "42"``), ``None`` when there is none. Commands carry
    ``exit_code`` (``None`` when a signal ended them) and ``signal``. ``resumed_ms`` is
    set when this run resumed its hibernated session (how long the restore took);
    ``state_lost_reason`` when ``state_lost`` is True and the platform knows why.
    """

    id: str
    session_id: str
    thread_id: str
    kind: str
    status: str
    stdout: str
    stderr: str
    truncated: bool
    result: RichResult | None
    error: PythonError | None
    state_lost: bool
    files: ExecutionFiles
    artifacts: list[Artifact]
    artifacts_skipped: list[SkippedPath]
    code_sha256: str | None
    idempotency_key: str | None
    duration_ms: int | None
    cpu_ms: float | None
    created_at: str
    finished_at: str | None
    exit_code: int | None = None
    signal: str | None = None
    pid: int | None = None
    resumed_ms: int | None = None
    state_lost_reason: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the code ran to its end without an exception (a command: exit 0)."""
        return self.status == "ok"

    @classmethod
    def from_json(cls, d: Json) -> Execution:
        artifacts = d.get("artifacts")
        skipped = d.get("artifactsSkipped")
        return cls(
            d["id"],
            d["sessionId"],
            d["threadId"],
            d.get("kind", "code"),
            d["status"],
            d.get("stdout") or "",
            d.get("stderr") or "",
            bool(d.get("truncated", False)),
            RichResult.from_json(d.get("result")),
            PythonError.from_json(d.get("error")),
            bool(d.get("stateLost", False)),
            ExecutionFiles.from_json(d.get("files")),
            [Artifact.from_json(a) for a in artifacts] if artifacts else [],
            [SkippedPath.from_json(x) for x in skipped] if skipped else [],
            d.get("codeSha256"),
            d.get("idempotencyKey"),
            d.get("durationMs"),
            d.get("cpuMs"),
            d["createdAt"],
            d.get("finishedAt"),
            d.get("exitCode"),
            d.get("signal"),
            d.get("pid"),
            d.get("resumedMs"),
            d.get("stateLostReason"),
        )


CommandResult = Execution
"""A command's record: an ``Execution`` with ``kind == "command"``, ``exit_code`` and ``signal``."""


@dataclass(slots=True)
class ExecutionInterrupt:
    """The answer to ``executions.interrupt(id)``: ``requested`` is False when it had ended."""

    id: str
    status: str
    requested: bool

    @classmethod
    def from_json(cls, d: Json) -> ExecutionInterrupt:
        return cls(d["id"], d["status"], bool(d.get("requested", False)))


@dataclass(slots=True)
class ProcessInfo:
    """A background process: ``status`` is ``running`` or ``exited``."""

    id: str
    pid: int | None
    command: str
    status: str
    exit_code: int | None
    signal: str | None
    started_at: str | None
    ended_at: str | None

    @classmethod
    def from_json(cls, d: Json) -> ProcessInfo:
        return cls(
            d["id"],
            d.get("pid"),
            d.get("command", ""),
            d["status"],
            d.get("exitCode"),
            d.get("signal"),
            d.get("startedAt"),
            d.get("endedAt"),
        )


@dataclass(slots=True)
class ProcessExit:
    """How a background process ended: ``exit_code`` is None when a signal ended it."""

    exit_code: int | None
    signal: str | None


# ---------------------------------------------------------------------------------------
# Files


@dataclass(slots=True)
class FileEntry:
    """A directory listing entry: ``type`` is ``file`` or ``directory``."""

    path: str
    type: str
    size: int
    modified_at: str | None

    @property
    def is_dir(self) -> bool:
        return self.type == "directory"

    @classmethod
    def from_json(cls, d: Json) -> FileEntry:
        return cls(d["path"], d["type"], d.get("size", 0), d.get("modifiedAt"))


@dataclass(slots=True)
class FileInfo:
    """A stored file: what ``write``/``upload``/``stat`` answer."""

    path: str
    type: str
    size: int
    content_type: str
    sha256: str
    version: int
    created_at: str | None
    modified_at: str | None

    @property
    def is_dir(self) -> bool:
        return False

    @classmethod
    def from_json(cls, d: Json) -> FileInfo:
        return cls(
            d["path"],
            d.get("type", "file"),
            d["size"],
            d.get("contentType", "application/octet-stream"),
            d.get("sha256", ""),
            d.get("version", 0),
            d.get("createdAt"),
            d.get("modifiedAt"),
        )


@dataclass(slots=True)
class GrepMatch:
    path: str
    line: int
    text: str

    @classmethod
    def from_json(cls, d: Json) -> GrepMatch:
        return cls(d["path"], d["line"], d["text"])


@dataclass(slots=True)
class GrepCount:
    path: str
    count: int

    @classmethod
    def from_json(cls, d: Json) -> GrepCount:
        return cls(d["path"], d["count"])


@dataclass(slots=True)
class GrepResult:
    """``files`` (mode ``files_with_matches``), ``matches`` (``content``) or ``counts``."""

    mode: str
    files: list[str]
    matches: list[GrepMatch]
    counts: list[GrepCount]
    truncated: bool
    note: str | None

    @classmethod
    def from_json(cls, d: Json) -> GrepResult:
        return cls(
            d["mode"],
            list(d.get("files") or ()),
            [GrepMatch.from_json(m) for m in d.get("matches") or ()],
            [GrepCount.from_json(c) for c in d.get("counts") or ()],
            bool(d.get("truncated", False)),
            d.get("note"),
        )


@dataclass(slots=True)
class EditResult:
    path: str
    occurrences: int

    @classmethod
    def from_json(cls, d: Json) -> EditResult:
        return cls(d["path"], d["occurrences"])


@dataclass(slots=True)
class ArchiveUpload:
    """``upload_archive``'s answer: files ``written`` (``created`` of them new)."""

    path: str
    written: int
    created: int
    bytes: int
    revision: int

    @classmethod
    def from_json(cls, d: Json) -> ArchiveUpload:
        return cls(d["path"], d["written"], d["created"], d["bytes"], d["revision"])


@dataclass(slots=True)
class SignedUrl:
    """An absolute link that downloads an artifact without a key until ``expires_at``."""

    url: str
    expires_at: str


# ---------------------------------------------------------------------------------------
# Batches


@dataclass(slots=True)
class BatchCounts:
    queued: int = 0
    running: int = 0
    ok: int = 0
    error: int = 0
    timeout: int = 0
    memory: int = 0
    killed: int = 0
    cancelled: int = 0

    @property
    def finished(self) -> int:
        """Items that have ended, whatever their status."""
        return self.ok + self.error + self.timeout + self.memory + self.killed + self.cancelled

    @classmethod
    def from_json(cls, d: Json | None) -> BatchCounts:
        if not d:
            return cls()
        g = d.get
        return cls(
            g("queued", 0),
            g("running", 0),
            g("ok", 0),
            g("error", 0),
            g("timeout", 0),
            g("memory", 0),
            g("killed", 0),
            g("cancelled", 0),
        )


@dataclass(slots=True)
class Batch:
    """A batch's state: ``status`` is final at ``completed`` or ``cancelled``."""

    id: str
    status: str
    total: int
    counts: BatchCounts
    concurrency: int | None = None
    timeout_ms: int | None = None
    limits: EffectiveLimits | None = None
    template: str | None = None
    network: NetworkPolicy | None = None
    created_at: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    metadata: dict[str, Any] | None = None

    @property
    def done(self) -> bool:
        return self.status in ("completed", "cancelled")

    @classmethod
    def from_json(cls, d: Json) -> Batch:
        limits = d.get("limits")
        return cls(
            d["id"],
            d["status"],
            d.get("total", 0),
            BatchCounts.from_json(d.get("counts")),
            d.get("concurrency"),
            d.get("timeoutMs"),
            EffectiveLimits.from_json(limits) if limits else None,
            d.get("template"),
            NetworkPolicy.from_json(d.get("network")),
            d.get("createdAt"),
            d.get("startedAt"),
            d.get("finishedAt"),
            d.get("metadata"),
        )


@dataclass(slots=True)
class BatchPage:
    """One page of ``batches.list()``: pass ``next`` as ``before`` (None on the last)."""

    batches: list[Batch]
    next: str | None


@dataclass(slots=True)
class BatchItem:
    """One item's record (``index`` is its place in the submission)."""

    index: int
    id: str | None
    status: str
    attempts: int
    stdout: str | None
    stderr: str | None
    truncated: bool | None
    result: RichResult | None
    error: PythonError | None
    files: ExecutionFiles | None
    artifacts: list[Artifact]
    duration_ms: int | None
    started_at: str | None
    finished_at: str | None

    @classmethod
    def from_json(cls, d: Json) -> BatchItem:
        files = d.get("files")
        artifacts = d.get("artifacts")
        return cls(
            d["index"],
            d.get("id"),
            d["status"],
            d.get("attempts", 0),
            d.get("stdout"),
            d.get("stderr"),
            d.get("truncated"),
            RichResult.from_json(d.get("result")),
            PythonError.from_json(d.get("error")),
            ExecutionFiles.from_json(files) if files is not None else None,
            [Artifact.from_json(a) for a in artifacts] if artifacts else [],
            d.get("durationMs"),
            d.get("startedAt"),
            d.get("finishedAt"),
        )


@dataclass(slots=True)
class BatchItemEvent:
    """An item that just ended (``on_item``)."""

    index: int
    id: str | None
    status: str

    @classmethod
    def from_json(cls, d: Json) -> BatchItemEvent:
        return cls(d["index"], d.get("id"), d["status"])


# ---------------------------------------------------------------------------------------
# Templates


@dataclass(slots=True)
class TemplateLatest:
    version: int
    status: str

    @classmethod
    def from_json(cls, d: Json | None) -> TemplateLatest | None:
        return None if d is None else cls(d["version"], d["status"])


@dataclass(slots=True)
class TemplateSummary:
    name: str
    shared: bool
    description: str | None
    pool_size: int
    latest: TemplateLatest | None

    @classmethod
    def from_json(cls, d: Json) -> TemplateSummary:
        return cls(d["name"], bool(d.get("shared")), d.get("description"), d.get("poolSize", 0), TemplateLatest.from_json(d.get("latest")))


@dataclass(slots=True)
class TemplateVersion:
    """One build of a template: ``status`` is ``building``, ``ready`` or ``failed``."""

    version: int
    status: str
    image_digest: str | None
    size_bytes: int | None
    created_at: str
    finished_at: str | None
    error: str | None

    @classmethod
    def from_json(cls, d: Json) -> TemplateVersion:
        return cls(d["version"], d["status"], d.get("imageDigest"), d.get("sizeBytes"), d["createdAt"], d.get("finishedAt"), d.get("error"))


@dataclass(slots=True)
class Template:
    name: str
    shared: bool
    description: str | None
    pool_size: int
    created_at: str
    versions: list[TemplateVersion]

    @classmethod
    def from_json(cls, d: Json) -> Template:
        return cls(
            d["name"],
            bool(d.get("shared")),
            d.get("description"),
            d.get("poolSize", 0),
            d["createdAt"],
            [TemplateVersion.from_json(v) for v in d.get("versions") or ()],
        )


# ---------------------------------------------------------------------------------------
# Network


@dataclass(slots=True)
class Connection:
    """One connection attempt through the egress proxy: ``verdict`` allowed or denied."""

    id: str
    host: str
    port: int
    address: str | None
    verdict: str
    reason: str
    rule: str | None
    bytes_in: int
    bytes_out: int
    started_at: str
    duration_ms: int
    session_id: str | None
    batch_id: str | None
    batch_item: int | None

    @classmethod
    def from_json(cls, d: Json) -> Connection:
        return cls(
            d["id"],
            d["host"],
            d["port"],
            d.get("address"),
            d["verdict"],
            d.get("reason", ""),
            d.get("rule"),
            d.get("bytesIn", 0),
            d.get("bytesOut", 0),
            d["startedAt"],
            d.get("durationMs", 0),
            d.get("sessionId"),
            d.get("batchId"),
            d.get("batchItem"),
        )


@dataclass(slots=True)
class SessionNetwork:
    """A session's policy (None: no network) and one page of its connections, newest first."""

    policy: NetworkPolicy | None
    connections: list[Connection]
    next: str | None

    @classmethod
    def from_json(cls, d: Json) -> SessionNetwork:
        return cls(NetworkPolicy.from_json(d.get("policy")), [Connection.from_json(c) for c in d.get("connections") or ()], d.get("next"))


def camel_keys(options: Mapping[str, Any]) -> Json:
    """snake_case option keys as the API's camelCase (``memory_mb`` -> ``memoryMb``)."""
    out: Json = {}
    for key, value in options.items():
        if "_" in key:
            head, *rest = key.split("_")
            key = head + "".join(part[:1].upper() + part[1:] for part in rest)
        out[key] = value
    return out
