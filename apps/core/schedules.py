"""Schedules for periodic jobs that can say when they next fire.

Huey decides *whether* a periodic task is due each minute; the Jobs page and
`sync_status` also need to say *when* it next runs, so a schedule here is a
Huey crontab plus the words to describe it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from huey import crontab

# A week of minutes: every schedule used here fires at least weekly.
_HORIZON_MINUTES = 7 * 24 * 60 + 1


@dataclass(frozen=True)
class Cron:
    description: str
    minute: str = "*"
    hour: str = "*"
    day: str = "*"
    month: str = "*"
    day_of_week: str = "*"
    _validate: Callable[[datetime], bool] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        validate = crontab(
            minute=self.minute,
            hour=self.hour,
            day=self.day,
            month=self.month,
            day_of_week=self.day_of_week,
        )
        object.__setattr__(self, "_validate", validate)

    def as_huey(self) -> Callable[[datetime], bool]:
        return self._validate

    def next_after(self, moment: datetime) -> datetime | None:
        """First whole minute strictly after `moment` (naive local time) that fires."""
        candidate = moment.replace(second=0, microsecond=0) + timedelta(minutes=1)
        for _ in range(_HORIZON_MINUTES):
            if self._validate(candidate):
                return candidate
            candidate += timedelta(minutes=1)
        return None


@dataclass(frozen=True)
class Every:
    """Every N minutes, N asked of `interval` each time, so a setting an admin
    changes applies from the next minute without a restart. The callable comes
    from the app that registers the job (core reads no app's settings).

    Huey asks a periodic task's schedule once a minute; a run is due when the
    minute count since the epoch is a multiple of N.
    """

    interval: Callable[[], int]  # minutes

    def minutes(self) -> int:
        return max(1, int(self.interval()))

    @property
    def description(self) -> str:
        minutes = self.minutes()
        return "every minute" if minutes == 1 else f"every {minutes} minutes"

    def _fires(self, moment: datetime) -> bool:
        return _minute_index(moment) % self.minutes() == 0

    def as_huey(self) -> Callable[[datetime], bool]:
        return self._fires

    def next_after(self, moment: datetime) -> datetime | None:
        minutes = self.minutes()
        index = _minute_index(moment) + 1
        index += -index % minutes
        return datetime(1970, 1, 1) + timedelta(minutes=index)


def _minute_index(moment: datetime) -> int:
    # Naive local time, as Huey passes it; counted from a fixed naive epoch so
    # the arithmetic has no time zone in it.
    return int((moment.replace(tzinfo=None) - datetime(1970, 1, 1)).total_seconds() // 60)


Schedule = Cron | Every
