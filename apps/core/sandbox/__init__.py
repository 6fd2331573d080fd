"""Running untrusted work (parsing a file, rendering a PDF page) in a child
process with a wall-clock limit, a CPU limit and an address-space limit.

    from apps.core.sandbox import ChildLimits, run_in_child, sandbox_task

See zygote.py for how children are made and client.py for the calling side.
"""

from apps.core.sandbox.client import (
    ChildLimits,
    ChildOutcome,
    SandboxUnavailable,
    run_in_child,
    sandbox_stop,
    sandbox_warm_up,
)
from apps.core.sandbox.tasks import sandbox_task

__all__ = [
    "ChildLimits",
    "ChildOutcome",
    "SandboxUnavailable",
    "run_in_child",
    "sandbox_stop",
    "sandbox_task",
    "sandbox_warm_up",
]
