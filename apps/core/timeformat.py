"""The one way Jarvis writes a moment: 24-hour, in the person's time zone.

There is one time zone per instance (settings.TIME_ZONE, JARVIS_TIME_ZONE):
a household shares a home. Templates use the `when` filter
(apps/core/templatetags/jarvis.py); scripts read the zone from
<body data-time-zone> and write the same shape (static/js/drafts/clock.js).
"""

from __future__ import annotations

WHEN_FORMAT = "Y-m-d H:i"  # Django date-format letters: 2026-12-01 19:30
