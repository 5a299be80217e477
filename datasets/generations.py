"""Generations: each export is a whole tree under `gen-<time>-<random>/`; `current.json` names
the one being served, with each file's ETag, size and type.

Readers (the serving view, mirrors) read `current.json` first, so they never see a mix of two
exports. The previous generation is always kept, and older ones for a grace period, so a
reader that read the pointer just before a switch can still finish.
"""

import datetime as dt
import hashlib
import logging
import posixpath
import secrets
import time
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import orjson
from django.core.files import File
from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage

from .storage import content_type_for

logger = logging.getLogger(__name__)

POINTER = "current.json"
MANIFEST = "manifest.json"
PREFIX = "gen-"


@dataclass(frozen=True)
class FileInfo:
    etag: str  # strong, quoted: '"<sha256 hex>"'
    size: int
    content_type: str

    def as_dict(self) -> dict:
        return {"etag": self.etag, "size": self.size, "content_type": self.content_type}


def generation_name(now: dt.datetime) -> str:
    """Sorts by time: `gen-20261123T115000123456Z-1a2b3c`."""
    return f"{PREFIX}{now.astimezone(dt.UTC):%Y%m%dT%H%M%S%f}Z-{secrets.token_hex(3)}"


def generation_time(name: str) -> dt.datetime | None:
    try:
        return dt.datetime.strptime(name[len(PREFIX) :].split("Z-")[0], "%Y%m%dT%H%M%S%f").replace(
            tzinfo=dt.UTC
        )
    except ValueError:
        return None


def read_pointer(storage) -> dict | None:
    """The served generation's manifest, or None before the first export."""
    try:
        with storage.open(POINTER, "rb") as fh:
            data = orjson.loads(fh.read())
    except (FileNotFoundError, OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(data, dict) or "generation" not in data or "files" not in data:
        return None
    return data


def _replace(storage, name: str, data: bytes) -> None:
    if hasattr(storage, "replace_atomically"):
        storage.replace_atomically(name, data)
    else:  # a backend we do not know: best effort
        storage.delete(name)
        storage.save(name, ContentFile(data))


def publish(
    storage,
    *,
    root: Path,
    files: dict[str, FileInfo],
    now: dt.datetime,
    extra: dict,
    order: Iterable[str],
) -> str:
    """Upload the tree under a new generation in `order` (index.json last), then switch the
    pointer to it, unless a newer snapshot was published meanwhile (two exports racing: the
    older one is left for pruning). Returns the generation's name."""
    generation = generation_name(now)
    for rel in order:
        with open(root / rel, "rb") as fh:
            saved = storage.save(f"{generation}/{rel}", File(fh, name=rel))
        if saved != f"{generation}/{rel}":  # the storage renamed it: never serve a wrong file
            raise RuntimeError(f"storage saved {rel} as {saved}")
    manifest = {
        "generation": generation,
        "created_at": int(now.timestamp()),
        **extra,
        "files": {rel: info.as_dict() for rel, info in files.items()},
    }
    data = orjson.dumps(manifest, option=orjson.OPT_INDENT_2)
    storage.save(f"{generation}/{MANIFEST}", ContentFile(data))
    current = read_pointer(storage)
    # A newer snapshot published meanwhile stays; one dated after this very moment is not a
    # race but a clock that was ahead (stepped back since, or another server's): keeping it
    # froze the files until the clock caught up.
    if (
        current is not None
        and current["generation"] > generation
        and current.get("created_at", 0) <= time.time()
    ):
        logger.warning(
            "datasets: %s is newer than %s; not switching", current["generation"], generation
        )
        return generation
    _replace(storage, POINTER, data)
    return generation


def _walk(storage, prefix: str) -> tuple[list[str], list[str]]:
    """Every file and folder under `prefix` (folders deepest first)."""
    dirs, files = storage.listdir(prefix)
    out_files = [posixpath.join(prefix, f) for f in files]
    out_dirs = []
    for d in dirs:
        sub_files, sub_dirs = _walk(storage, posixpath.join(prefix, d))
        out_files += sub_files
        out_dirs += sub_dirs
    return out_files, out_dirs + [prefix]


def generations(storage) -> list[str]:
    """Generation names present in the storage, oldest first."""
    try:
        dirs, _files = storage.listdir("")
    except FileNotFoundError:
        return []
    return sorted(d for d in dirs if d.startswith(PREFIX))


def prune(storage, *, now: dt.datetime, grace_seconds: int) -> list[str]:
    """Delete generations older than the previous one, once past the grace period."""
    pointer = read_pointer(storage)
    current = pointer["generation"] if pointer else None
    names = generations(storage)
    if current not in names:
        return []
    keep = set(names[max(0, names.index(current) - 1) :])  # previous, current, and newer
    deleted = []
    for name in names:
        born = generation_time(name)
        if name in keep or born is None or (now - born).total_seconds() < grace_seconds:
            continue
        files, dirs = _walk(storage, name)
        for rel in files:
            storage.delete(rel)
        if isinstance(storage, FileSystemStorage):  # folders exist only on a filesystem
            for rel in dirs:
                storage.delete(rel)
        deleted.append(name)
        logger.info("datasets: deleted old generation %s", name)
    return deleted


def file_info(path: Path, rel: str) -> FileInfo:
    """Strong ETag (SHA-256 of the bytes), size and type of one written file."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return FileInfo(etag=f'"{digest.hexdigest()}"', size=size, content_type=content_type_for(rel))


class Hashes:
    """file_info of a tree's files, each computed in a thread as soon as it is handed over
    (hashlib and file reads let other threads run): the big files are hashed while the rest
    is written."""

    def __init__(self, root: Path):
        self.root = root
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hashes")
        self.futures: dict[str, Future] = {}

    def add(self, *names: str) -> None:
        for rel in names:
            self.futures[rel] = self.pool.submit(file_info, self.root / rel, rel)

    def results(self, order: Iterable[str]) -> dict[str, FileInfo]:
        """Each file's info, in `order`: those handed over, and the others hashed now."""
        return {
            rel: self.futures[rel].result()
            if rel in self.futures
            else file_info(self.root / rel, rel)
            for rel in order
        }

    def __enter__(self) -> "Hashes":
        return self

    def __exit__(self, *exc) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
