"""What a small real model trips over, handled by code: tool calls written as
text (replayed from a real Qwen2.5-Coder stream), a reply that runs away or
repeats itself, a reply cut by its length limit, filters the model made up,
and a server whose context the passages overflow."""

import json

import pytest
from django.core.management import call_command

from apps.chats import runner
from apps.instance.prompts import COMPACT_SYSTEM_PROMPT, DEFAULT_SYSTEM_PROMPT, set_system_prompt
from apps.library.ingest.sync import source_sync
from tests.fakes.llm import Reply
from tests.support.fixtures import run_turn

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def notes(owner, vault, make_source, embedder):
    vault.write(
        "home/boiler.md",
        "# Boiler\n\nThe boiler service is due on 14 April; Hale & Sons do it.\n",
    )
    source_sync(source=make_source(owner, vault), embedder=embedder)


def tool_results(request) -> list[str]:
    return [m["content"] for m in request.json["messages"] if m["role"] == "tool"]


def test_a_tool_call_written_as_a_json_block_is_run(owner, notes, local_model, llm):
    # Recorded from the real model: it wrote its search_notes call as a
    # ```json block in the content instead of a tool call.
    llm.queue(Reply(replay="qwen_json_tool_call"), Reply(text="On 14 April [1]."))
    _, answer = run_turn(owner, "When is the boiler service due?")
    assert len(llm.chat_requests) == 2
    assert "14 April" in tool_results(llm.chat_requests[1])[0]
    assert "```json" not in answer.text and answer.text.endswith("On 14 April [1].")
    assert answer.citations[0]["path"] == "home/boiler.md"


def test_a_hermes_tool_call_in_the_content_with_string_arguments_is_run(
    owner, notes, local_model, llm
):
    call = {"name": "search_notes", "arguments": json.dumps({"query": "Hale"})}
    llm.queue(Reply(text=f"<tool_call>\n{json.dumps(call)}\n</tool_call>"), Reply(text="Hale [1]."))
    _, answer = run_turn(owner, "Who does the boiler?")
    assert "<tool_call>" not in answer.text
    assert [a["name"] for a in answer.activity] == ["search_notes", "search_notes"]
    assert json.loads(answer.activity[1]["arguments"]) == {"query": "Hale"}


@pytest.mark.parametrize(
    "call",
    [
        # The real model's other habit: the tool's name under "function".
        {"function": "search_notes", "arguments": {"query": "Hale", "mode": "lookup"}},
        # OpenAI's own shape, written out as text.
        {"function": {"name": "search_notes", "arguments": json.dumps({"query": "Hale"})}},
    ],
)
@pytest.mark.parametrize("fenced", [True, False])
def test_a_call_that_names_its_tool_as_function_is_run(
    owner, notes, local_model, llm, call, fenced
):
    # Fenced as a ```json block, or the whole reply the bare object.
    written = json.dumps(call, indent=2)
    llm.queue(
        Reply(text=f"```json\n{written}\n```" if fenced else written), Reply(text="Hale [1].")
    )
    _, answer = run_turn(owner, "Who does the boiler?")
    assert answer.text == "Hale [1]."
    assert [a["name"] for a in answer.activity] == ["search_notes", "search_notes"]
    assert json.loads(answer.activity[1]["arguments"])["query"] == "Hale"


def test_a_call_whose_json_as_a_whole_is_broken_is_still_run(owner, notes, local_model, llm):
    # The real model on the seed benchmark: a list opened inside the object.
    written = '{["name": "search_notes", "arguments": {"query": "Hale", "latest_only": true}]}'
    llm.queue(Reply(text=written), Reply(text="Hale [1]."))
    _, answer = run_turn(owner, "Who does the boiler?")
    assert answer.text == "Hale [1]."
    assert json.loads(answer.activity[1]["arguments"]) == {"query": "Hale", "latest_only": True}


def test_a_broken_object_that_names_no_offered_tool_is_left_alone(owner, notes, local_model, llm):
    text = '{["name": "delete_everything", "arguments": {"query": "Hale"}]}'
    llm.queue(Reply(text=text))
    _, answer = run_turn(owner, "Who does the boiler?")
    assert answer.text.startswith(text)
    assert [a["name"] for a in answer.activity] == ["search_notes"]  # the first search only


def test_text_that_only_looks_like_a_call_is_left_alone(owner, notes, local_model, llm):
    text = 'Here is JSON:\n```json\n{"name": "Hale & Sons", "arguments": 3}\n```'
    llm.queue(Reply(text=text))
    _, answer = run_turn(owner, "Show me some JSON")
    assert answer.text == text
    assert len(llm.chat_requests) == 1


def test_an_answer_cut_by_the_length_limit_says_so(owner, notes, local_model, llm):
    llm.queue(Reply(replay="qwen_length"))
    _, answer = run_turn(owner, "Describe the history of the boiler in detail.")
    assert answer.text.startswith("I'm sorry, but as an AI language model")
    assert runner.LENGTH_NOTE in answer.notes
    assert answer.usage["stop_reason"] == "length"


def test_a_run_away_reply_is_stopped_by_its_token_budget(owner, local_model, llm, settings):
    settings.CHAT_REPLY_MAX_TOKENS = 64
    llm.queue(Reply(text=" ".join(f"word{n}" for n in range(2000)), chunk_chars=40))
    _, answer = run_turn(owner, "Tell me a long story")
    assert len(answer.text) < 2000
    assert any(note.startswith("Stopped: this reply reached its budget") for note in answer.notes)
    assert answer.status == "done"


def test_a_reply_that_repeats_itself_is_stopped(owner, local_model, llm):
    llm.queue(Reply(text="I don't have any information about the boiler. " * 200))
    _, answer = run_turn(owner, "Tell me about the boiler")
    assert answer.text.count("I don't have any information") < 20
    assert runner.REPEAT_NOTE in answer.notes


def test_filters_that_match_nothing_in_the_library_are_dropped_and_said(
    owner, notes, local_model, llm
):
    made_up = {"query": "boiler service", "category": "job_application", "entity": "a company"}
    llm.queue(
        Reply(tool_calls=[("search_notes", json.dumps(made_up))]), Reply(text="14 April [1].")
    )
    run_turn(owner, "When is the boiler service due?")
    [result] = tool_results(llm.chat_requests[1])
    assert result.startswith("Ignored filters that match nothing in this library:")
    assert "category='job_application'" in result and "14 April" in result


def test_the_search_schema_shows_no_example_values():
    from apps.chats.tools import TOOLS

    schema = json.dumps(TOOLS["search_notes"].spec.parameters)
    assert "e.g." not in schema and "job_application" not in schema


def test_a_context_overflow_shrinks_the_passages_and_retries_once(owner, notes, local_model, llm):
    overflow = {
        "error": {
            "code": 400,
            "message": "the request exceeds the available context size, try increasing it",
            "type": "exceed_context_size_error",
        }
    }
    llm.queue(Reply(status=400, error_body=overflow), Reply(text="On 14 April [1]."))
    _, answer = run_turn(owner, "When is the boiler service due?")
    assert len(llm.chat_requests) == 2
    assert runner.SHRUNK_NOTE in answer.notes
    assert answer.status == "done" and answer.citations


def test_chat_json_includes_the_replys_notes(owner, notes, local_model, llm, capsys):
    llm.queue(Reply(replay="qwen_uncited_answer"))
    call_command("chat", "--user", owner.username, "--json", "When is the boiler service due?")
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert printed["reply"].startswith("The boiler service is due on 14 April")
    assert any(note.startswith("Citations attributed") for note in printed["notes"])


def test_an_answer_that_repeats_a_passage_without_citing_gets_attributed_citations(
    owner, notes, local_model, llm
):
    # Recorded from the real model: the right answer, copied from passage [1], uncited.
    llm.queue(Reply(replay="qwen_uncited_answer"))
    _, answer = run_turn(owner, "When is the boiler service due?")
    assert len(llm.chat_requests) == 1  # no request asking the model to cite
    assert answer.text == "The boiler service is due on 14 April; Hale & Sons do it [1]."
    assert answer.citations[0]["path"] == "home/boiler.md"
    assert any(note.startswith("Citations attributed by Jarvis") for note in answer.notes)
    assert not any(note.startswith("Uncited") for note in answer.notes)


def test_a_search_only_model_is_offered_the_search_and_the_reader_only(
    owner, notes, local_model, llm
):
    local_model.search_only = True
    local_model.save()
    llm.queue(
        Reply(tool_calls=[("list_projects", "{}")]),
        Reply(text="On 14 April [1]."),
    )
    _, answer = run_turn(owner, "When is the boiler service due?")
    assert answer.citations[0]["path"] == "home/boiler.md"
    offered = [t["function"]["name"] for t in llm.chat_requests[0].json["tools"]]
    assert offered == ["search_notes", "get_document"]
    assert "Unknown tool 'list_projects'" in json.dumps(llm.chat_requests[1].json)


def test_a_search_only_model_gets_the_compact_prompt_unless_the_admin_wrote_one(
    owner, notes, local_model, llm
):
    def system_sent() -> str:
        return llm.chat_requests[-1].json["messages"][0]["content"]

    llm.queue(Reply(text="On 14 April [1]."))
    run_turn(owner, "When is the boiler service due?")
    assert DEFAULT_SYSTEM_PROMPT.strip() in system_sent()

    local_model.search_only = True
    local_model.save()
    llm.queue(Reply(text="On 14 April [1]."))
    run_turn(owner, "When is the boiler service due?")
    sent = system_sent()
    assert COMPACT_SYSTEM_PROMPT.strip() in sent and DEFAULT_SYSTEM_PROMPT.strip() not in sent

    set_system_prompt("You are the Smiths' assistant. Cite passages like [1].")
    llm.queue(Reply(text="On 14 April [1]."))
    run_turn(owner, "When is the boiler service due?")
    assert system_sent().startswith("You are the Smiths' assistant.")


def first_header(owner, llm) -> str:
    """The header Jarvis gave passage [1] in a turn's request, as sent."""
    llm.queue(Reply(text="On 14 April [1]."))
    run_turn(owner, "When is the boiler service due?")
    content = llm.chat_requests[-1].json["messages"][-1]["content"]
    sent = content if isinstance(content, str) else json.dumps(content)
    [header] = [line for line in sent.splitlines() if line.startswith("[1] ")]
    return header


def answer_around_header(owner, llm, write):
    """The saved answer when the model's reply is `write(header)`, the header
    being the one Jarvis gave passage [1]."""
    llm.queue(Reply(text=write(first_header(owner, llm))))
    _, answer = run_turn(owner, "When is the boiler service due?")
    return answer


def test_a_passage_header_the_model_copies_is_left_out_of_the_answer(
    owner, notes, local_model, llm
):
    # A real small model began an answer with the header Jarvis gave the passage.
    assert first_header(owner, llm).startswith('[1] "Boiler" · home/boiler.md')
    answer = answer_around_header(
        owner, llm, lambda header: f"{header}\nThe service is due on 14 April [1]."
    )
    assert answer.text == "The service is due on 14 April [1]."
    assert answer.citations[0]["path"] == "home/boiler.md"


def test_the_wrapper_and_an_unquoted_header_the_model_copies_are_left_out(
    owner, notes, local_model, llm
):
    # The real model also began answers with "<retrieved_data>" or with the
    # passage's number and title, its quotes dropped, on a line of their own.
    llm.queue(
        Reply(
            text="<retrieved_data>\n[1] Boiler\nThe service is due on 14 April [1].\n</retrieved_data>"
        )
    )
    _, answer = run_turn(owner, "When is the boiler service due?")
    assert answer.text == "The service is due on 14 April [1]."
    assert answer.citations[0]["path"] == "home/boiler.md"


@pytest.mark.parametrize(
    "copy",
    [
        lambda header: header.replace('"', ""),  # without its quotes
        lambda header: "[1] · " + header.split(" · ", 1)[1],  # its fields, the title left out
    ],
)
def test_a_header_copied_in_part_is_left_out(owner, notes, local_model, llm, copy):
    answer = answer_around_header(
        owner, llm, lambda header: f"{copy(header)}\nThe service is due on 14 April [1]."
    )
    assert answer.text == "The service is due on 14 April [1]."


@pytest.mark.parametrize(
    ("write", "saved"),
    [
        # The real model copied passage 3's header under the number 1 on a
        # line of its own, then repeated passage 3: the 1 left behind cited
        # the wrong passage.
        (
            "{copied}\nAs for the bins, the green bin goes out on Tuesdays.",
            "As for the bins, the green bin goes out on Tuesdays [{bins}].",
        ),
        # …and ran a whole header under another number into its sentence:
        # the header's own number stands for it.
        (
            "As for the bins, the green bin goes out on Tuesdays. {whole}",
            "As for the bins, the green bin goes out on Tuesdays. [{bins}]",
        ),
    ],
)
def test_a_header_copied_under_another_passage_number_is_left_out(
    owner, vault, make_source, embedder, local_model, llm, write, saved
):
    vault.write("home/boiler.md", "# Boiler\n\nThe boiler service is due on 14 April.\n")
    vault.write("home/bins.md", "# Bins\n\nThe green bin goes out on Tuesdays.\n")
    source_sync(source=make_source(owner, vault), embedder=embedder)
    question = "When is the boiler service, and which day do the bins go out?"
    llm.queue(Reply(text="On 14 April [1]."))
    run_turn(owner, question)
    content = llm.chat_requests[-1].json["messages"][-1]["content"]
    sent = content if isinstance(content, str) else json.dumps(content)
    headers = {line[1]: line for line in sent.splitlines() if line[:1] == "[" and " · " in line}
    bins = next(n for n, line in headers.items() if "home/bins.md" in line)
    other = next(n for n in headers if n != bins)
    copied = f"[{other}] · " + headers[bins].split(" · ", 1)[1]
    whole = f"[{other}]" + headers[bins][3:]
    llm.queue(Reply(text=write.format(copied=copied, whole=whole)))
    _, answer = run_turn(owner, question)
    assert answer.text == saved.format(bins=bins)
    assert [c["path"] for c in answer.citations] == ["home/bins.md"]


@pytest.mark.parametrize(
    ("retry", "saved"),
    [
        # Asked to cite, the real model began its rewrite with a copied header:
        # the header goes, the rewrite's own citation stays.
        ("{header}\nThe service is due on 14 April [1].", "The service is due on 14 April [1]."),
        # A header's number is not a citation: a rewrite that cites only by
        # the header it copied leaves the first answer.
        ("{header}\nSpring, I reckon.", "Spring, I reckon."),
    ],
)
def test_a_header_copied_into_the_rewrite_asked_for_citations_is_left_out(
    owner, notes, local_model, llm, retry, saved
):
    header = first_header(owner, llm)
    llm.queue(Reply(text="Spring, I reckon."), Reply(text=retry.format(header=header)))
    _, answer = run_turn(owner, "When is the boiler service due?")
    assert "cited none" in json.dumps(llm.chat_requests[-1].json["messages"][-1])
    assert answer.text == saved


def test_an_answer_of_only_passage_numbers_is_asked_for_in_words(owner, notes, local_model, llm):
    # The real model answered "When was it abandoned and why?" with "[1] [3]".
    llm.queue(Reply(text="[1] [3]"), Reply(text="Hale & Sons service it on 14 April [1]."))
    _, answer = run_turn(owner, "When is the boiler service due?")
    assert answer.text == "Hale & Sons service it on 14 April [1]."
    assert "only passage numbers" in json.dumps(llm.chat_requests[1].json["messages"][-1])
    assert answer.citations[0]["path"] == "home/boiler.md"


@pytest.mark.parametrize(
    "copy",
    [
        "The boiler service is due on 14 April; Hale & Sons do it [1].",
        # with a lead-in and a list marker, as the real model wrote them
        "Here is what the notes say:\n\n- The boiler service is due on 14 April; Hale & Sons do it.",
    ],
)
def test_an_answer_that_only_copies_a_passage_is_asked_for_in_words(
    owner, notes, local_model, llm, copy
):
    # Asked for a hostel room number, the real model pasted the passage that
    # mentions the hostel: it read like an answer and said nothing asked.
    # (A pasted passage that holds the question's words is an answer: the
    # recorded qwen_uncited_answer test above.)
    llm.queue(Reply(text=copy), Reply(text="The notes do not say which engineer comes."))
    _, answer = run_turn(owner, "Which engineer comes for the boiler?")
    assert "only copied passages" in json.dumps(llm.chat_requests[1].json["messages"][-1])
    assert answer.text == "The notes do not say which engineer comes."
    assert not any(note.startswith("Uncited") for note in answer.notes)


def test_an_answer_in_its_own_words_is_not_asked_again(owner, notes, local_model, llm):
    llm.queue(Reply(text="Hale & Sons, on 14 April [1]."))
    _, answer = run_turn(owner, "When is the boiler service due?")
    assert len(llm.chat_requests) == 1
    assert answer.text == "Hale & Sons, on 14 April [1]."


def test_a_second_copy_leaves_the_first(owner, notes, local_model, llm):
    copy = "The boiler service is due on 14 April; Hale & Sons do it [1]."
    llm.queue(Reply(text=copy), Reply(text=copy))
    _, answer = run_turn(owner, "Which engineer comes for the boiler?")
    assert len(llm.chat_requests) == 2
    assert answer.text == copy
    assert answer.citations[0]["path"] == "home/boiler.md"


def test_an_answer_of_only_copied_titles_is_asked_for_in_words(owner, notes, local_model, llm):
    llm.queue(Reply(text='[1] "Boiler"'), Reply(text="Hale & Sons, on 14 April [1]."))
    _, answer = run_turn(owner, "When is the boiler service due?")
    assert answer.text == "Hale & Sons, on 14 April [1]."


def test_a_second_answer_of_only_numbers_leaves_the_first(owner, notes, local_model, llm):
    llm.queue(Reply(text="[1]"), Reply(text="[1]"))
    _, answer = run_turn(owner, "When is the boiler service due?")
    assert answer.text == "[1]"
    assert len(llm.chat_requests) == 2


@pytest.mark.parametrize(
    ("write", "saved"),
    [
        # The real model ran the headers into its sentences, whole or as far
        # as the title: the number stays, as the citation it stands for.
        (
            lambda header: (
                f'The service is due on 14 April. {header} Hale do it, see [1] "Boiler".'
            ),
            "The service is due on 14 April. [1] Hale do it, see [1].",
        ),
        # It also began with the header, then repeated the passage uncited:
        # the header's number had counted as a citation, and with the header
        # dropped the answer was left with none. Now it gets attributed ones.
        (
            lambda header: f"{header}\nThe boiler service is due on 14 April; Hale & Sons do it.",
            "The boiler service is due on 14 April; Hale & Sons do it [1].",
        ),
    ],
)
def test_a_copied_header_leaves_the_answer_cited(owner, notes, local_model, llm, write, saved):
    answer = answer_around_header(owner, llm, write)
    assert answer.text == saved
    assert answer.citations[0]["path"] == "home/boiler.md"


def test_task_boxes_reach_the_model_as_words(owner, vault, make_source, embedder, local_model, llm):
    # Over "- [x] House Robber" the real model answered "which problems has he
    # already solved?" from another passage: a box said nothing of done to it.
    vault.write(
        "dsa/dp_problems.md",
        "# DP problems\n\n- [x] House Robber\n- [ ] Burst Balloons\n\n"
        "```\n- [ ] the syntax, as written\n```\n",
    )
    source_sync(source=make_source(owner, vault), embedder=embedder)
    llm.queue(Reply(text="House Robber is solved [1]."))
    _, answer = run_turn(owner, "Which DP problems are solved?")
    content = llm.chat_requests[-1].json["messages"][-1]["content"]
    sent = content if isinstance(content, str) else json.dumps(content)
    assert "- (done) House Robber" in sent and "- (not done) Burst Balloons" in sent
    assert "- [ ] the syntax, as written" in sent  # code is left as written
    assert answer.citations[0]["path"] == "dsa/dp_problems.md"
