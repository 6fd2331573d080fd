"""Text that is shown, never interpreted: control characters spelled out."""

from __future__ import annotations

import re

# Every C0 control but tab and newline, DEL, and the C1 controls (ESC's
# 8-bit twin CSI among them): invisible or interpreted in a terminal or a
# page, so a command or its output could look other than it is.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def controls_visible(text: str) -> str:
    """`text` with every control character written out as an escape (`\\x1b`)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text or "")
