"""The functions a sandbox child may run, by name.

An app registers its functions with `@sandbox_task("app.name")` in a module
of its own; the zygote imports every module that registered one, so the
children find them already loaded. A task takes JSON-able params and a list
of byte blobs and returns a JSON-able dict and a list of blobs.
"""

from __future__ import annotations

from collections.abc import Callable

Task = Callable[[dict, list[bytes]], tuple[dict, list[bytes]]]

TASKS: dict[str, Task] = {}


def sandbox_task(name: str) -> Callable[[Task], Task]:
    def register(function: Task) -> Task:
        TASKS[name] = function
        return function

    return register


def task_modules() -> list[str]:
    return sorted({function.__module__ for function in TASKS.values()})
