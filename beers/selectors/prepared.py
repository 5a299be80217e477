"""Querysets compiled once per shape and run again with new values: the live reads' hot path.

Building and compiling a ranking queryset costs Django about 3 ms, longer than PostgreSQL takes
to answer it (measured on 1M prices: build 1.5 ms, compile 1.4 ms, execute 0.9 ms). A query's
SQL text depends only on its shape (which filters are present, the slice), not on the values
compared, so each shape is compiled once per process with stand-in values, and the positions
of those stand-ins in the parameter list are remembered. A later call binds its own values in
their place and runs the same SQL; psycopg then prepares it on each pooled connection.

On PostgreSQL the shape's constants are written into the SQL as literals, so only the values
are parameters. Two things follow, both measured on 1M prices: the planner can prove a partial
index's predicate (`status IN ('published', 'disputed')`) and so use it in a generic plan, and it
then picks that generic plan after five runs instead of planning each call again (the search's
query: 1.6 ms, of which 0.6 ms planning, against 0.85 ms). Dates that change once a day (today,
the 180-day cut) therefore belong in the shape, not in the values.

The queryset is still written with the ORM, once, in the selector (`build`); this module only
avoids building it again.
"""

import dataclasses
import datetime as dt
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from django.db import connections
from django.db.models import QuerySet

MAX_SHAPES = 512  # per process, oldest dropped first; a shape is a few kB (SQL, converters)


@dataclass(frozen=True)
class _Compiled:
    sql: str
    params: tuple  # constants, or _Slot where a value is bound per call
    names: tuple[str, ...]
    converters: tuple  # (position, converter functions, expression), as Django applies them


@dataclass(frozen=True)
class _Slot:
    name: str
    kind: str  # how Django adapted the value: "same", "date" or "datetime"
    wrap: type | None = None  # the type Django gave it, e.g. psycopg's Int4 for an integer


def _stand_in(name: str, value: Any, n: int, round_: int) -> Any:
    """A value of the same type, unusual and unique per name and round, in range for any field
    (Django turns an out-of-range integer into an always-empty or always-true condition)."""
    if isinstance(value, bool):
        raise TypeError(f"{name}: a bool changes the SQL itself; make it part of the shape")
    k = 1 + n + 100 * round_
    if isinstance(value, dt.datetime):
        return dt.datetime(1000 + k, 2, 3, 4, 5, 6, tzinfo=dt.UTC)
    if isinstance(value, dt.date):
        return dt.date(1000 + k, 2, 3)
    if isinstance(value, int):
        return 29_000 + k
    if isinstance(value, float):
        return 12_345.25 + k
    if isinstance(value, str):
        return f"\x00stand-in {k} for {name}\x00"
    raise TypeError(f"{name}: no stand-in for {type(value).__name__}")


def _kinds(value: Any) -> tuple[str, ...]:
    """The ways Django may have turned a value of this type into a query parameter."""
    if isinstance(value, dt.datetime):
        return ("same", "datetime")
    if isinstance(value, dt.date):
        return ("same", "date")
    return ("same",)


def _adapt(connection, slot: "_Slot", value: Any) -> Any:
    """`value` as Django passes it for this slot."""
    if slot.kind == "datetime":
        value = connection.ops.adapt_datetimefield_value(value)
    elif slot.kind == "date":
        value = connection.ops.adapt_datefield_value(value)
    return value if slot.wrap is None else slot.wrap(value)


class Prepared:
    """`build(shape, **values)` returns a `.values(...)` queryset whose SQL depends only on
    `shape` and on which values are given.

    `rows(shape, **values)` answers what `list(build(shape, **values))` would, without building
    it again for a shape it has seen. Values may be int, float, str, date or datetime; everything
    else that changes the SQL (booleans, which filters apply, slices) belongs in `shape`.
    """

    def __init__(self, build: Callable[..., QuerySet]):
        self.build = build
        self._shapes: OrderedDict[Hashable, _Compiled] = OrderedDict()
        self._lock = threading.Lock()

    def rows(self, shape: Hashable, *, using: str = "default", **values) -> list[dict]:
        key = (using, shape, tuple(sorted(values)))
        compiled = self._shapes.get(key)
        if compiled is None:
            compiled = self._compile(using, shape, values)
            with self._lock:
                self._shapes[key] = compiled
                while len(self._shapes) > MAX_SHAPES:
                    self._shapes.popitem(last=False)
        connection = connections[using]
        params = [
            _adapt(connection, p, values[p.name]) if isinstance(p, _Slot) else p
            for p in compiled.params
        ]
        with connection.cursor() as cursor:
            cursor.execute(compiled.sql, params)
            fetched = cursor.fetchall()
        names, converters = compiled.names, compiled.converters
        out = []
        for values_ in fetched:
            row = list(values_)
            for pos, functions, expression in converters:
                value = row[pos]
                for convert in functions:
                    value = convert(value, expression, connection)
                row[pos] = value
            out.append(dict(zip(names, row, strict=True)))
        return out

    def _compile(self, using: str, shape: Hashable, values: dict) -> _Compiled:
        """Compile the shape twice, with two sets of stand-ins: a parameter that is the
        stand-in of a value both times is that value's slot; every other one must be the same
        constant both times (so a constant equal to a stand-in by chance cannot pass)."""
        connection = connections[using]
        rounds = []
        for round_ in (0, 1):
            stand_ins = {
                name: _stand_in(name, v, n, round_) for n, (name, v) in enumerate(values.items())
            }
            qs = self.build(shape, **stand_ins)
            query = qs.query
            if query.extra_select or not query.values_select:
                raise TypeError("Prepared takes a .values(...) queryset without extra()")
            compiler = query.get_compiler(using=using)
            sql, params = compiler.as_sql()
            rounds.append((sql, _slots(connection, params, stand_ins)))
        (sql, bound), (other_sql, other) = rounds
        if sql != other_sql or list(map(_key, bound)) != list(map(_key, other)):
            raise TypeError("the SQL or its constants depend on the values: put them in the shape")
        seen = {p.name for p in bound if isinstance(p, _Slot)}
        missing = set(values) - seen
        if missing:
            raise TypeError(f"values not in the SQL (part of the shape?): {sorted(missing)}")
        if connection.vendor == "postgresql":
            sql, bound = _inline_constants(connection, sql, bound)
        fields = [col for col, _, _ in compiler.select[: compiler.col_count]]
        converters = tuple(
            (pos, tuple(functions), expression)
            for pos, (functions, expression) in compiler.get_converters(fields).items()
        )
        names = tuple(query.selected or (*query.values_select, *query.annotation_select))
        if len(names) != len(fields):
            raise TypeError("Prepared takes a .values(...) queryset of plain columns")
        return _Compiled(sql, tuple(bound), names, converters)


def _slots(connection, params, stand_ins: dict) -> list:
    """The parameters with each stand-in replaced by the slot of its value."""
    candidates = []
    for name, stand_in in stand_ins.items():
        for kind in _kinds(stand_in):
            slot = _Slot(name, kind)
            candidates.append((_adapt(connection, slot, stand_in), slot))
    bound: list = []
    for param in params:
        found = next(((a, s) for a, s in candidates if _same(param, a)), None)
        if found is None:
            if any(_mentions(param, adapted) for adapted, _ in candidates):
                raise TypeError(f"a value reached the SQL transformed: {param!r}")
            bound.append(param)
            continue
        adapted, slot = found
        if type(param) is not type(adapted):  # e.g. psycopg's Int4 around an int
            slot = dataclasses.replace(slot, wrap=type(param))
        bound.append(slot)
    return bound


def _key(param: Any) -> Any:
    """What a parameter is, for comparing two compilations (psycopg's JSON wrappers compare by
    identity; their `obj` is the value)."""
    wrapped = getattr(param, "obj", _END)
    return param if wrapped is _END else (type(param).__name__, repr(wrapped))


def _same(param: Any, adapted: Any) -> bool:
    """The parameter is the adapted stand-in, maybe in a subclass Django wrapped it in."""
    return isinstance(param, type(adapted)) and param == adapted


def _mentions(param: Any, adapted: Any) -> bool:
    return isinstance(param, str) and isinstance(adapted, str) and adapted.strip("\x00") in param


_PLACEHOLDER = re.compile(r"%[%s]")
_END = object()


def _inline_constants(connection, sql: str, params: list) -> tuple[str, list]:
    """The SQL with every constant parameter written as a literal (psycopg quotes it); the
    slots stay `%s` parameters."""
    from psycopg.sql import Literal

    connection.ensure_connection()
    params_left = iter(params)
    kept: list = []

    def replace(match: re.Match) -> str:
        if match.group() == "%%":
            return "%%"
        param = next(params_left)
        if isinstance(param, _Slot):
            kept.append(param)
            return "%s"
        return Literal(param).as_string(connection.connection).replace("%", "%%")

    inlined = _PLACEHOLDER.sub(replace, sql)
    if next(params_left, _END) is not _END:
        raise TypeError("more parameters than placeholders")
    return inlined, kept
