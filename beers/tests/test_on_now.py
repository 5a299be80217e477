"""Schedule semantics: weekdays from Sunday = 0, half-open windows, past midnight, 24:00."""

import datetime as dt
import zoneinfo

from hypothesis import given, settings
from hypothesis import strategies as st

from beers.selectors.on_now import is_on, next_boundary, schedule_covers

SP = zoneinfo.ZoneInfo("America/Sao_Paulo")
MANAUS = zoneinfo.ZoneInfo("America/Manaus")
NORONHA = zoneinfo.ZoneInfo("America/Noronha")


def local(y, m, d, hh, mm, tz=SP, ss=0):
    return dt.datetime(y, m, d, hh, mm, ss, tzinfo=tz)


# 2026-11-23 is a Monday (weekday 1 with Sunday = 0).
WEEKDAYS = {"days": [1, 2, 3, 4, 5], "start": "17:00", "end": "20:00"}


def test_window_is_half_open():
    assert not schedule_covers(WEEKDAYS, local(2026, 11, 23, 16, 59, ss=59))
    assert schedule_covers(WEEKDAYS, local(2026, 11, 23, 17, 0))
    assert schedule_covers(WEEKDAYS, local(2026, 11, 23, 19, 59, ss=59))
    assert not schedule_covers(WEEKDAYS, local(2026, 11, 23, 20, 0))


def test_sunday_is_day_zero():
    sunday = {"days": [0], "start": "12:00", "end": "14:00"}
    assert schedule_covers(sunday, local(2026, 11, 22, 13, 0))  # Sunday
    assert not schedule_covers(sunday, local(2026, 11, 23, 13, 0))  # Monday
    assert not schedule_covers(WEEKDAYS, local(2026, 11, 22, 18, 0))  # Sunday is not 1..5


def test_happy_hour_started_yesterday_is_on_after_midnight():
    friday_night = {"days": [5], "start": "22:00", "end": "02:00"}
    assert schedule_covers(friday_night, local(2026, 11, 27, 23, 30))  # Friday
    assert schedule_covers(friday_night, local(2026, 11, 28, 1, 59))  # Saturday early
    assert not schedule_covers(friday_night, local(2026, 11, 28, 2, 0))
    assert not schedule_covers(friday_night, local(2026, 11, 27, 1, 0))  # Friday early
    assert not schedule_covers(friday_night, local(2026, 11, 28, 23, 0))  # Saturday night


def test_saturday_night_runs_into_sunday():
    saturday_night = {"days": [6], "start": "20:00", "end": "03:00"}
    assert schedule_covers(saturday_night, local(2026, 11, 29, 2, 30))  # Sunday 02:30


def test_end_24_00_is_end_of_day():
    late = {"days": [1], "start": "18:00", "end": "24:00"}
    assert schedule_covers(late, local(2026, 11, 23, 23, 59, ss=59))
    assert not schedule_covers(late, local(2026, 11, 24, 0, 0))  # Tuesday midnight


def test_equal_start_and_end_is_a_full_day_from_start():
    full = {"days": [1], "start": "10:00", "end": "10:00"}
    assert schedule_covers(full, local(2026, 11, 23, 10, 0))
    assert schedule_covers(full, local(2026, 11, 24, 9, 59))
    assert not schedule_covers(full, local(2026, 11, 24, 10, 0))


def test_no_schedule_is_always_on():
    assert is_on([], local(2026, 11, 23, 4, 0))


def reference_covers(schedule, when: dt.datetime) -> bool:
    """Minute-by-minute reference: build the explicit set of open minutes of the week."""
    start_h, start_m = map(int, schedule["start"].split(":"))
    end_h, end_m = map(int, schedule["end"].split(":"))
    start, end = start_h * 60 + start_m, end_h * 60 + end_m
    open_minutes = set()
    for day in schedule["days"]:
        stop = end if end > start else end + 1440
        for minute in range(start, stop):
            open_minutes.add((day * 1440 + minute) % (7 * 1440))
    weekday = (when.weekday() + 1) % 7
    return (weekday * 1440 + when.hour * 60 + when.minute) in open_minutes


# Wall-clock times; the zone is attached in the test (hypothesis wants naive bounds here).
NAIVE_2026 = st.datetimes(min_value=dt.datetime(2026, 1, 1), max_value=dt.datetime(2027, 1, 1))  # noqa: DTZ001
times = st.integers(0, 23).flatmap(
    lambda h: st.sampled_from([0, 15, 30, 59]).map(lambda m: f"{h:02d}:{m:02d}")
)
schedules = st.fixed_dictionaries(
    {
        "days": st.lists(st.integers(0, 6), min_size=1, max_size=7, unique=True),
        "start": times,
        "end": st.one_of(times, st.just("24:00")),
    }
)


@settings(max_examples=300, deadline=None)
@given(
    schedule=schedules,
    when=NAIVE_2026,
    tz=st.sampled_from([SP, MANAUS, NORONHA]),
)
def test_matches_minute_reference_in_three_time_zones(schedule, when, tz):
    moment = when.replace(second=0, microsecond=0, tzinfo=tz)
    assert schedule_covers(schedule, moment) == reference_covers(schedule, moment)


@settings(max_examples=200, deadline=None)
@given(
    schedule=schedules,
    when=NAIVE_2026,
    tz=st.sampled_from([SP, MANAUS, NORONHA]),
)
def test_nothing_changes_before_the_next_boundary(schedule, when, tz):
    now = when.replace(tzinfo=tz).astimezone(dt.UTC)
    boundary = next_boundary([[schedule]], now, tz)
    assert boundary > now
    state = schedule_covers(schedule, now.astimezone(tz))
    probe = now
    # Every minute up to the boundary has the same state.
    while probe + dt.timedelta(minutes=1) < boundary:
        probe += dt.timedelta(minutes=1)
        assert schedule_covers(schedule, probe.astimezone(tz)) == state
    local_boundary = boundary.astimezone(tz)
    assert local_boundary.second == 0 and local_boundary.microsecond == 0


def test_boundary_is_the_next_local_midnight_without_schedules():
    now = local(2026, 11, 23, 21, 30, tz=MANAUS)
    assert next_boundary([], now, MANAUS) == local(2026, 11, 24, 0, 0, tz=MANAUS)


NEW_YORK = zoneinfo.ZoneInfo("America/New_York")
# Clock changes: New York's of 2026 (02:00 skipped, 01:00-02:00 repeated); São Paulo's daylight
# saving time of 2018-2019 (midnight skipped, 23:00-24:00 repeated), before Brazil dropped it.
CLOCK_CHANGES = [
    (NEW_YORK, dt.datetime(2026, 3, 8, 7, 0, tzinfo=dt.UTC)),
    (NEW_YORK, dt.datetime(2026, 11, 1, 6, 0, tzinfo=dt.UTC)),
    (SP, dt.datetime(2018, 11, 4, 3, 0, tzinfo=dt.UTC)),
    (SP, dt.datetime(2019, 2, 17, 2, 0, tzinfo=dt.UTC)),
]
near_times = st.integers(0, 3).flatmap(
    lambda h: st.sampled_from([0, 30]).map(lambda m: f"{h:02d}:{m:02d}")
) | st.sampled_from(["22:00", "23:00", "23:30", "24:00"])


@settings(max_examples=300, deadline=None)
@given(
    change=st.sampled_from(CLOCK_CHANGES),
    before_minutes=st.integers(-26 * 60, 26 * 60),
    schedule=st.fixed_dictionaries(
        {
            "days": st.lists(st.integers(0, 6), min_size=1, max_size=7, unique=True),
            "start": near_times,
            "end": near_times,
        }
    ),
)
def test_nothing_changes_before_the_next_boundary_across_a_change_of_the_clocks(
    change, before_minutes, schedule
):
    """Where clocks change (any IANA zone may be a city's), the wall clock jumps: a cached
    answer must end at the jump, and at an edge that falls in a skipped or repeated hour."""
    if schedule["start"] == "24:00":
        schedule = {**schedule, "start": "00:00"}
    tz, instant = change
    now = instant + dt.timedelta(minutes=before_minutes)
    boundary = next_boundary([[schedule]], now, tz)
    assert boundary > now
    state = schedule_covers(schedule, now.astimezone(tz))
    day = now.astimezone(tz).date()
    probe = now
    while probe + dt.timedelta(minutes=1) < boundary:
        probe += dt.timedelta(minutes=1)
        assert schedule_covers(schedule, probe.astimezone(tz)) == state, probe
        assert probe.astimezone(tz).date() == day, probe
