"""What "on right now" means: weekly schedules read in the city's own time.

A schedule {days, start, end} opens on each listed weekday (0 = Sunday) at `start` and closes
at `end` the same day; when end <= start it closes at `end` on the following day; "24:00" is
the end of the day. Windows are half-open [start, end).
"""

import datetime as dt
import zoneinfo


def minutes(value: str) -> int:
    """'HH:MM' as minutes after midnight ('24:00' -> 1440)."""
    h, m = value.split(":")
    return int(h) * 60 + int(m)


def weekday_sunday0(day: dt.date) -> int:
    """0 = Sunday … 6 = Saturday (Python's weekday() has Monday = 0)."""
    return (day.weekday() + 1) % 7


def schedule_covers(schedule: dict, local: dt.datetime) -> bool:
    """Whether one schedule covers the city-local wall-clock time `local`."""
    days = set(schedule["days"])
    start, end = minutes(schedule["start"]), minutes(schedule["end"])
    t = local.hour * 60 + local.minute + (local.second + local.microsecond / 1e6) / 60
    today = weekday_sunday0(local.date())
    if end > start:
        return today in days and start <= t < end
    # Crosses midnight: the evening part today, the early part from yesterday's opening.
    return (today in days and t >= start) or ((today - 1) % 7 in days and t < end)


def is_on(schedules: list[dict], local: dt.datetime) -> bool:
    """A price with no schedules is always on; otherwise one schedule must cover `local`."""
    return not schedules or any(schedule_covers(s, local) for s in schedules)


def _at(day: dt.date, minute_of_day: int, tz: zoneinfo.ZoneInfo) -> dt.datetime:
    """The instant at wall-clock `minute_of_day` (may exceed 1440) after local `day` began."""
    naive = dt.datetime.combine(day, dt.time(0)) + dt.timedelta(minutes=minute_of_day)
    return naive.replace(tzinfo=tz)


def _instants(day: dt.date, minute_of_day: int, tz: zoneinfo.ZoneInfo) -> set[dt.datetime]:
    """Every instant that may be that wall-clock time: two around a change of the clocks (a
    time skipped or repeated), else one. An extra one only ends a cached answer earlier."""
    at = _at(day, minute_of_day, tz)
    # in UTC: datetimes of one zone compare (and hash) by wall clock, whatever their fold
    return {at.astimezone(dt.UTC), at.replace(fold=1).astimezone(dt.UTC)}


def _offset(instant: int, tz: zoneinfo.ZoneInfo) -> dt.timedelta | None:
    return dt.datetime.fromtimestamp(instant, tz).utcoffset()


def clock_change(now: dt.datetime, until: dt.datetime, tz: zoneinfo.ZoneInfo):
    """The first instant in (now, until] at which the city's clocks change (daylight saving
    time, a new offset), to the second; None when they do not. The wall clock jumps then, so
    what is on may change (none of Brazil's zones changes today; the tz database says when)."""
    start, end = int(now.timestamp()), int(until.timestamp())
    # hourly samples: no zone changes its clocks twice within an hour
    lo = start
    for probe in [*range(start + 3600, end, 3600), end]:
        if _offset(probe, tz) != _offset(lo, tz):
            hi = probe
            while hi - lo > 1:  # the last second of the old offset, the first of the new
                mid = (lo + hi) // 2
                if _offset(mid, tz) == _offset(lo, tz):
                    lo = mid
                else:
                    hi = mid
            return dt.datetime.fromtimestamp(hi, dt.UTC)
        lo = probe
    return None


def next_local_midnight(now: dt.datetime, tz: zoneinfo.ZoneInfo) -> dt.datetime:
    local = now.astimezone(tz)
    return _at(local.date() + dt.timedelta(days=1), 0, tz).astimezone(dt.UTC)


def next_boundary(schedules_list, now: dt.datetime, tz: zoneinfo.ZoneInfo) -> dt.datetime:
    """The first instant after `now` at which any of the schedules opens or closes, or the
    next city-local midnight (dates decide validity and age), whichever comes first."""
    best = next_local_midnight(now, tz)
    local_day = now.astimezone(tz).date()
    seen: set[tuple] = set()
    for schedules in schedules_list:
        for s in schedules:
            key = (tuple(s["days"]), s["start"], s["end"])
            if key in seen:
                continue
            seen.add(key)
            start, end = minutes(s["start"]), minutes(s["end"])
            if end <= start:
                end += 1440
            for offset in (-1, 0):
                day = local_day + dt.timedelta(days=offset)
                if weekday_sunday0(day) not in s["days"]:
                    continue
                for edge in (start, end):
                    for instant in _instants(day, edge, tz):
                        if now < instant < best:
                            best = instant
    changed = clock_change(now, best, tz)
    return best if changed is None else min(best, changed)
