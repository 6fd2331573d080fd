"""The weekly digest slot, as pure arithmetic on an explicit clock.

A slot is a weekday and an hour in the instance's time zone (InstanceSettings,
read at run time). Every function takes `now` (an aware datetime) instead of
reading the clock, so the catch-up rule can be tested with a frozen one, and
works in `now`'s own time zone: callers pass `timezone.localtime(now)`.

Catch-up rule: a digest is overdue when a slot has passed since the last
successful one. With no successful digest yet there is no baseline, and
nothing is overdue: the first digest waits for the next slot rather than
surprising someone the moment the feature is switched on.
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta, tzinfo

SLOT_LENGTH = timedelta(hours=1)


def _slot_on(day, hour: int, zone: tzinfo | None) -> datetime:
    # Built in local wall time, then normalised to UTC: comparisons of two
    # datetimes sharing one zoneinfo object compare wall times, which is wrong
    # across a DST change; UTC instants compare correctly with anything.
    local = datetime.combine(day, time(hour), tzinfo=zone)
    return local.astimezone(UTC)


def _check(now: datetime, weekday: int, hour: int) -> None:
    if now.tzinfo is None:
        raise ValueError("`now` must be an aware datetime")
    if not 0 <= weekday <= 6 or not 0 <= hour <= 23:
        raise ValueError("weekday is 0..6 (Monday = 0) and hour 0..23")


def last_slot_before(now: datetime, weekday: int, hour: int) -> datetime:
    """The most recent slot at or before `now` (in UTC)."""
    _check(now, weekday, hour)
    days_back = (now.weekday() - weekday) % 7
    slot = _slot_on(now.date() - timedelta(days=days_back), hour, now.tzinfo)
    if slot > now:
        slot = _slot_on(now.date() - timedelta(days=days_back + 7), hour, now.tzinfo)
    return slot


def next_slot_after(now: datetime, weekday: int, hour: int) -> datetime:
    """The first slot strictly after `now` (in UTC)."""
    _check(now, weekday, hour)
    days_ahead = (weekday - now.weekday()) % 7
    slot = _slot_on(now.date() + timedelta(days=days_ahead), hour, now.tzinfo)
    if slot <= now:
        slot = _slot_on(now.date() + timedelta(days=days_ahead + 7), hour, now.tzinfo)
    return slot


def current_slot(now: datetime, weekday: int, hour: int) -> datetime | None:
    """The slot `now` falls in (its hour), or None. The hourly job asks this:
    it fires at minute 0 but may run a few minutes late."""
    slot = last_slot_before(now, weekday, hour)
    return slot if now < slot + SLOT_LENGTH else None


def is_overdue(
    now: datetime, last_success: datetime | None, weekday: int, hour: int
) -> datetime | None:
    """The missed slot when one has passed since `last_success`, else None
    (also None without a baseline: see the module docstring)."""
    if last_success is None:
        return None
    slot = last_slot_before(now, weekday, hour)
    return slot if slot > last_success else None
