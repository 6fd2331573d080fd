"""Chat tests' helpers. The fake model (`llm`, `local_model`, `cloud_model`,
`cloud_user`) and `run_turn` live in tests/support/fixtures.py, which every
folder gets; `run_turn` is still importable from here, its old place."""

from tests.support.fixtures import run_turn  # noqa: F401
