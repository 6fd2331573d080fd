"""Draft builds take turns: one per person and two for the instance at a
time; the rest wait in order and the editor is told how many are ahead.
The queue runs real threads; the view test runs a real pandoc export."""

from __future__ import annotations

import json
import threading
import time

import pytest

from apps.core.errors import Refused
from apps.drafts import services
from apps.drafts.build_queue import BuildQueue


class Gate:
    """Work that runs until the test lets it finish."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.finish = threading.Event()

    def __call__(self) -> str:
        self.started.set()
        assert self.finish.wait(timeout=30)
        return "built"


def wait_for(predicate, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met"
        time.sleep(0.01)


def test_one_build_per_person_and_two_at_once_the_rest_wait_their_turn():
    queue = BuildQueue(per_person=1, at_once=2)
    gates = {name: Gate() for name in ("alice1", "alice2", "bob1", "carol1")}
    owners = {"alice1": 1, "alice2": 1, "bob1": 2, "carol1": 3}
    tickets = {
        name: queue.submit(
            user_id=owners[name], draft_id=9, kind="compile", filename="a.tex", work=gate
        )
        for name, gate in gates.items()
    }
    assert gates["alice1"].started.wait(5) and gates["bob1"].started.wait(5)
    state = {name: ticket.state for name, ticket in tickets.items()}
    assert state == {"alice1": "running", "alice2": "queued", "bob1": "running", "carol1": "queued"}
    assert (queue.ahead_of(tickets["alice2"]), queue.ahead_of(tickets["carol1"])) == (0, 1)

    gates["alice1"].finish.set()  # Alice's second build takes the free slot; Carol still waits
    wait_for(lambda: tickets["alice2"].state == "running")
    assert tickets["carol1"].state == "queued" and queue.ahead_of(tickets["carol1"]) == 0
    assert tickets["alice1"].state == "done" and tickets["alice1"].result == "built"

    gates["bob1"].finish.set()
    wait_for(lambda: tickets["carol1"].state == "running")
    for gate in gates.values():
        gate.finish.set()
    wait_for(lambda: all(t.state == "done" for t in tickets.values()))


def test_a_person_cannot_pile_up_builds():
    queue = BuildQueue(per_person=1, at_once=2)
    gate = Gate()
    for _ in range(4):  # one running, three waiting
        queue.submit(user_id=1, draft_id=9, kind="compile", filename="a.tex", work=gate)
    with pytest.raises(Refused, match="3 builds waiting"):
        queue.submit(user_id=1, draft_id=9, kind="compile", filename="a.tex", work=gate)
    queue.submit(user_id=2, draft_id=8, kind="compile", filename="b.tex", work=gate)  # others can
    gate.finish.set()


def test_a_failing_build_frees_its_slot():
    queue = BuildQueue(per_person=1, at_once=1)

    def broken() -> str:
        raise Refused("Only .tex files compile; export Markdown instead.")

    first = queue.submit(user_id=1, draft_id=9, kind="compile", filename="a.md", work=broken)
    second = queue.submit(user_id=2, draft_id=8, kind="compile", filename="b.tex", work=lambda: 1)
    wait_for(lambda: second.state == "done")
    assert first.error == "Only .tex files compile; export Markdown instead."
    assert second.result == 1


@pytest.mark.django_db
def test_the_editor_gets_a_ticket_and_follows_it_to_the_pdf(client, owner, member):
    draft = services.draft_create(owner=owner, title="Notes", filename="n.md", content="# Hi\n")
    client.force_login(owner)
    answer = client.post(
        f"/drafts/{draft.pk}/build/export/",
        json.dumps({"name": "n.md"}),
        content_type="application/json",
    )
    assert answer.status_code == 202
    ticket = answer.json()
    assert ticket["state"] in ("queued", "running")
    deadline = time.monotonic() + 120
    while ticket["state"] != "done":
        assert time.monotonic() < deadline
        time.sleep(0.2)
        ticket = client.get(ticket["status_url"]).json()
    assert ticket["ok"], ticket["error"]
    assert ticket["url"] == f"/drafts/{draft.pk}/pdf/export/?name=n.md"
    # The ticket is its owner's alone.
    client.force_login(member)
    assert client.get(ticket["status_url"]).status_code == 404


@pytest.mark.django_db
def test_a_build_that_cannot_start_is_refused_at_once(client, owner):
    draft = services.draft_create(owner=owner, title="Notes", filename="n.md", content="# Hi\n")
    client.force_login(owner)
    answer = client.post(
        f"/drafts/{draft.pk}/build/compile/",
        json.dumps({"name": "n.md"}),
        content_type="application/json",
    )
    assert answer.status_code == 400
    assert answer.json()["error"] == "Only .tex files compile; export Markdown instead."
