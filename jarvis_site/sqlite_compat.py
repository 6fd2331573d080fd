"""Make `import sqlite3` give a module that can load extensions.

sqlite-vec is a loadable extension. Some Python builds (this project's CI
machine among them) compile the stdlib `sqlite3` without
`enable_load_extension`. Django's sqlite backend imports `sqlite3.dbapi2` at
module level and calls that module's `connect`, so swapping the wrapper's
attribute is not enough: the swap has to happen in `sys.modules` before Django
imports its backend. `settings.py` calls `ensure_loadable_sqlite()` first thing.
"""

from __future__ import annotations

import sqlite3
import sys


def stdlib_can_load_extensions() -> bool:
    return hasattr(sqlite3.Connection, "enable_load_extension")


def ensure_loadable_sqlite() -> str:
    """Return the name of the module now behind `sqlite3`."""
    if stdlib_can_load_extensions():
        return "sqlite3"
    try:
        import sqlean
        import sqlean.dbapi2
    except ImportError as exc:  # pragma: no cover - depends on the install
        from django.core.exceptions import ImproperlyConfigured

        raise ImproperlyConfigured(
            "This Python's sqlite3 cannot load extensions and sqlean.py is missing: "
            "install it with `pip install sqlean.py` (it is a project dependency)."
        ) from exc
    sys.modules["sqlite3"] = sqlean
    sys.modules["sqlite3.dbapi2"] = sqlean.dbapi2
    return "sqlean"
