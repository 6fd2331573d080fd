"""A fake `/rerank` endpoint over real HTTP, in both shapes Jarvis speaks:

- Jina/Cohere style (llama.cpp, vLLM, Infinity): POST {query, documents, top_n, model}
  → {"results": [{"index", "relevance_score"}]}
- Hugging Face TEI: POST {query, texts} → [{"index", "score"}]

It scores a document by how many of the query's words it contains (so a test
can predict the order), records every request (what reached the "model"),
and can be told to fail.
"""

from __future__ import annotations

import json
import re

from tests.fakes.serving import QuietHandler, ServedFake


def overlap_score(query: str, document: str) -> float:
    words = set(re.findall(r"\w+", query.lower()))
    found = set(re.findall(r"\w+", document.lower()))
    return float(len(words & found))


class _Handler(QuietHandler):
    owner: FakeRerank

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        self.owner.requests.append({"path": self.path, "json": body, "headers": dict(self.headers)})
        if self.owner.fail_with:
            self._send(self.owner.fail_with, b'{"error": "down"}', "application/json")
            return
        if self.path.rstrip("/") != "/rerank":
            self._send(404, b"{}", "application/json")
            return
        texts = body.get("documents", body.get("texts", []))
        scores = [overlap_score(body.get("query", ""), t) for t in texts]
        if "texts" in body:
            answer: object = [{"index": i, "score": s} for i, s in enumerate(scores)]
        else:
            answer = {"results": [{"index": i, "relevance_score": s} for i, s in enumerate(scores)]}
        self._send(200, json.dumps(answer).encode(), "application/json")


class FakeRerank(ServedFake):
    handler = _Handler

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.fail_with = 0  # an HTTP status to answer with instead of scores

    @property
    def sent_texts(self) -> list[str]:
        return [
            t for r in self.requests for t in r["json"].get("documents", r["json"].get("texts", []))
        ]
