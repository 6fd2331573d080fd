"""The functions a sandbox child may run, by name.

An app registers its functions with `@sandbox_task("app.name")` in its
`sandboxed` module; the zygote imports every app's `sandboxed` module, so the
children find them already loaded. The processes that ask for a task (web,
worker, CLI) never import those modules: they hold the parsers and PyMuPDF
(most of a second to import), which only the zygote needs. A task takes JSON-able params and a list
of byte blobs and returns a JSON-able dict and a list of blobs.
"""

from __future__ import annotations

from collections.abc import Callable

from django.apps import apps
from django.utils.module_loading import module_has_submodule

Task = Callable[[dict, list[bytes]], tuple[dict, list[bytes]]]

TASKS: dict[str, Task] = {}


def sandbox_task(name: str) -> Callable[[Task], Task]:
    def register(function: Task) -> Task:
        TASKS[name] = function
        return function

    return register


def task_modules() -> list[str]:
    """Every installed app's `sandboxed` module, found without importing it."""
    return sorted(
        f"{config.name}.sandboxed"
        for config in apps.get_app_configs()
        if module_has_submodule(config.module, "sandboxed")
    )
