"""The last export's deals files, kept to be patched by the next one (PostgreSQL's fast path).

Between two exports a few prices change, yet every file is written again (its envelope says
when). Formatting every row is most of an export's work (on 1M prices, 2 cores, about 9 s of
a 12 s first export), and reading them back from a table of stored rows took 1.9-2.1 s of a
3-4.5 s export; patching them takes 0.4 s. So each export keeps, under DATASETS_WORK_DIR, a
hard link to every city's deals.json and deals.csv and an index of their rows (the price's
id, its bar, the row's length in each file). The next export copies the unchanged rows'
bytes from there and formats only the rows of the prices that changed (refresh_rows's
CHANGED), merged in id order.

A kept copy is used only when
- it holds the rows the city has now but for those changed prices: it is named by the city's
  rows token (DealRowCity.token), which refresh_rows changes whenever anything changed and
  which a city formatted whole gets anew;
- its files are as they were written: their sizes and modification times are in the index.
Otherwise the city's rows are all formatted (and kept for the next export).

Only the current copies stay: `Kept.prune`, once the export committed and before it lets the
next one start, deletes the others (a copy made by an export that failed, too). The folder is
per database. Where exports run on several machines, each with its own folder, a copy made on
one is not found on another: that city is then formatted whole.
"""

import contextlib
import os
import re
import secrets
import shutil
import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import orjson
from django.conf import settings
from django.db import connection

# One index record per row: the price's id, its bar, its row's length in deals.json (with the
# ",\n" after it, which the file's last row lacks) and in deals.csv (with its CRLF).
RECORD = struct.Struct("<4q")
FIELDS = np.dtype([("id", "<i8"), ("venue", "<i8"), ("json", "<i8"), ("csv", "<i8")])
# Rows read from a kept copy at a time: about 2 MB of both files on the bench's prices.
BLOCK = 4096
STEMS = ("deals.json", "deals.csv")
INDEX = "deals.rows"
META = "meta.json"


class Stale(Exception):
    """A kept copy is not what its index says (changed or cut short while being read)."""


def new_token() -> str:
    return secrets.token_hex(8)


def work_dir() -> Path:
    """This database's folder of kept copies."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", str(connection.settings_dict["NAME"]))
    return Path(settings.DATASETS_WORK_DIR) / name


class RowIndex:
    """The index of the rows as they are written, into the folder that will become the copy."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.fh = open(folder / INDEX, "wb", buffering=1 << 16)  # noqa: SIM115

    def add(self, deal_id: int, venue: int, json_len: int, csv_len: int) -> None:
        self.fh.write(RECORD.pack(deal_id, venue, json_len, csv_len))

    def add_records(self, records: np.ndarray) -> None:
        self.fh.write(records.tobytes())

    def close(self) -> None:
        self.fh.close()

    def abandon(self) -> None:
        self.fh.close()
        shutil.rmtree(self.folder, ignore_errors=True)


@dataclass
class Base:
    """A kept copy of a city's deals files, checked against its index."""

    folder: Path
    count: int
    json_start: int  # where the first row begins
    json_end: int  # where the last row ends ("\n]" follows it)
    csv_start: int

    @classmethod
    def open(cls, folder: Path) -> "Base | None":
        try:
            meta = orjson.loads((folder / META).read_bytes())
            for stem in STEMS:
                stat = (folder / stem).stat()
                if [stat.st_size, stat.st_mtime_ns] != meta["files"][stem]:
                    return None
            if (folder / INDEX).stat().st_size != meta["count"] * RECORD.size:
                return None
            return cls(
                folder=folder,
                count=meta["count"],
                json_start=meta["json_start"],
                json_end=meta["json_end"],
                csv_start=meta["csv_start"],
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def blocks(self) -> Iterator[tuple[np.ndarray, bytes, bytes]]:
        """The rows, BLOCK at a time: their index records and their bytes in each file. The
        last row's JSON gets the ",\n" it lacks in the file, so every row is alike."""
        with contextlib.ExitStack() as stack:
            index = stack.enter_context(open(self.folder / INDEX, "rb"))
            js = stack.enter_context(open(self.folder / STEMS[0], "rb"))
            cs = stack.enter_context(open(self.folder / STEMS[1], "rb"))
            jpos, cpos, seen = self.json_start, self.csv_start, 0
            while seen < self.count:
                records = np.frombuffer(index.read(BLOCK * RECORD.size), dtype=FIELDS)
                if not len(records):
                    raise Stale(f"{self.folder}: the index ends early")
                seen += len(records)
                last = seen == self.count
                jlen = int(records["json"].sum()) - (2 if last else 0)
                clen = int(records["csv"].sum())
                jbytes = os.pread(js.fileno(), jlen, jpos)
                cbytes = os.pread(cs.fileno(), clen, cpos)
                if len(jbytes) != jlen or len(cbytes) != clen:
                    raise Stale(f"{self.folder}: the files end early")
                if last:
                    if jpos + jlen != self.json_end:
                        raise Stale(f"{self.folder}: the rows do not end where the index says")
                    jbytes += b",\n"
                jpos, cpos = jpos + jlen, cpos + clen
                yield records, jbytes, cbytes


def _starts(lengths: np.ndarray) -> np.ndarray:
    """Offsets of each row in its block, and the block's end: n + 1 values."""
    starts = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    return starts


def apply(
    base: Base,
    changed: np.ndarray,
    new_rows: Iterable[tuple[int, int, str, str]],
    files,
    tick: Callable[[int], None] | None = None,
) -> set[int]:
    """Write `base` into `files` (datasets.pgcopy._Files) without the rows of `changed` ids
    (sorted) and with `new_rows` (id, bar, CSV line, JSON item; in id order, each one's id in
    `changed`) merged in id order. Returns the ids of the bars of the rows written."""
    venues: set[int] = set()
    rows = iter(new_rows)
    pending = next(rows, None)
    seen = 0
    for records, jbytes, cbytes in base.blocks():
        seen += len(records)
        last = seen == base.count
        ids = records["id"]
        dropped = np.flatnonzero(np.isin(ids, changed, assume_unique=True))
        # (position in the block, 0 = a new row goes before it / 1 = it is dropped, the row)
        events: list[tuple[int, int, tuple | None]] = [(int(p), 1, None) for p in dropped]
        while pending is not None and (last or pending[0] < ids[-1]):
            events.append((int(np.searchsorted(ids, pending[0])), 0, pending))
            venues.add(pending[1])
            pending = next(rows, None)
        events.sort(key=lambda event: event[:2])  # stable: new rows stay in id order
        _merge(records, jbytes, cbytes, events, files)
        keep = np.ones(len(records), dtype=bool)
        keep[dropped] = False
        venues.update(np.unique(records["venue"][keep]).tolist())
        if tick is not None:
            tick(len(records))
    while pending is not None:  # a copy of no rows
        files.add_row(*pending)
        venues.add(pending[1])
        pending = next(rows, None)
    return venues


def _merge(records: np.ndarray, jbytes: bytes, cbytes: bytes, events: list, files) -> None:
    """One block of kept rows into `files`, with its events (see apply) in order: the runs of
    rows between them are copied as they are."""
    jat, cat = _starts(records["json"]), _starts(records["csv"])
    jview, cview = memoryview(jbytes), memoryview(cbytes)
    start = 0
    for position, kind, row in [*events, (len(records), 1, None)]:
        if start < position:
            files.copy(
                jview[jat[start] : jat[position]],
                cview[cat[start] : cat[position]],
                records[start:position],
            )
        if kind == 0:
            files.add_row(*row)
            start = position
        else:
            start = position + 1


@dataclass
class Kept:
    """The export's kept copies: the one each city may be patched from, and the new ones."""

    root: Path
    # city id -> (the token its kept copy must have, or None: read whole; its token now)
    tokens: dict[int, tuple[str | None, str]]
    changed: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # city slug -> how many of its rows were formatted (datasets.pgcopy.write_deals)
    formatted: dict[str, int] = field(default_factory=dict)

    def base(self, city_id: int) -> Base | None:
        wanted, _ = self.tokens.get(city_id, (None, ""))
        return Base.open(self.root / str(city_id) / wanted) if wanted else None

    def start(self, city_id: int) -> Path:
        """An empty folder for the copy this export makes of the city's files."""
        folder = self.root / str(city_id) / f"{self.tokens[city_id][1]}.new"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        return folder

    def keep(self, city_id: int, folder: Path, paths: tuple[Path, Path], meta: dict) -> None:
        """Link (or copy, across file systems) the written files into `folder` with their
        index, and make it the city's copy for its current token."""
        stats = {}
        for stem, path in zip(STEMS, paths, strict=True):
            try:
                os.link(path, folder / stem)
            except OSError:
                shutil.copy2(path, folder / stem)
            stat = (folder / stem).stat()
            stats[stem] = [stat.st_size, stat.st_mtime_ns]
        (folder / META).write_bytes(orjson.dumps({**meta, "files": stats}))
        final = folder.with_name(self.tokens[city_id][1])
        if final.exists():  # the same token read whole (its copy was missing or changed)
            shutil.rmtree(final)
        folder.rename(final)

    def prune(self) -> None:
        """After the export committed: only the current copies stay."""
        if not self.root.is_dir():
            return
        current = {str(city_id): token for city_id, (_, token) in self.tokens.items()}
        for city in self.root.iterdir():
            if city.name not in current:
                shutil.rmtree(city, ignore_errors=True)
                continue
            for copy in city.iterdir():
                if copy.name != current[city.name]:
                    shutil.rmtree(copy, ignore_errors=True)


def forget() -> None:
    """No copies kept (the rows state was dropped)."""
    shutil.rmtree(work_dir(), ignore_errors=True)
