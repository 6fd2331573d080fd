"""Jobs that exist only in the test suite, for exercising the worker."""

from apps.core.jobs import on_demand_job


class ProbeFailure(RuntimeError):
    pass


@on_demand_job(name="test_failing_probe", title="A job that always fails (tests only)")
def failing_probe(*, run) -> str:
    raise ProbeFailure("the probe failed on purpose")


@on_demand_job(name="test_ok_probe", title="A job that always succeeds (tests only)")
def ok_probe(label: str, *, run) -> str:
    return f"probe {label} ran"
