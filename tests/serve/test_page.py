"""The page in a real browser (headless Chromium through Selenium): type a question on the built-in
KG, check the ranked answers and the drawn evidence graph against the server's record."""
import httpx
import pytest

from rra.data.builtin import builtin_questions

pytest.importorskip("selenium")
from bench.serve_page import ask_in_browser, browser_binaries  # noqa: E402

pytestmark = pytest.mark.skipif(browser_binaries() is None,
                                reason="chromium + chromedriver not installed (scripts/install-chromium.sh)")


def test_page_answers_and_draws_the_evidence(live, tmp_path):
    # a 2-hop question the tiny retriever answers right (its top answer is gold), asked as a person would
    for q in builtin_questions("test"):
        rec = httpx.post(f"{live.url}/v1/answer", json={"question": q.question}, timeout=30).json()
        by_chain = (rec.get("extra") or {}).get("plan_kind") in (None, "chain")  # drawn as topic -> hop -> answer
        if (q.hops == 2 and by_chain and rec.get("answers") and rec["answers"][0] in q.answers
                and rec["answers"][0] not in q.topic_entities
                and len(rec["paths"][0]["path"]) == 2  # walked in two hops (a shorter path may reach it too)
                and any(x not in rec["answers"] and x not in q.topic_entities  # through a node that is no answer
                        for t in rec["triples"] for x in (t[0], t[2]))):
            break
    else:
        pytest.fail("the tiny retriever answered no 2-hop test question right")
    shot = tmp_path / "serve_page.png"
    shown = ask_in_browser(f"{live.url}/", q.question, shot)
    assert shown["answers"] == [a["id"] for a in rec["ranked"]], shown  # the page lists the server's ranking
    assert shown["answers"][0] in q.answers  # and its first answer is right
    assert shown["nodes"]["topic"] == q.topic_entities
    assert rec["answers"][0] in shown["nodes"]["answer"]
    assert len(shown["nodes"]["hop"]) >= 1 and len(shown["edges"]) >= 2  # topic -> hop -> answer
    assert set(shown["edges"]) <= {p.lstrip("^") for p in q.relation_path} | {r for p in rec["paths"] for r in
                                                                                  (x.lstrip("^") for x in p["path"])}
    assert rec["labels"][q.topic_entities[0]] in shown["node_labels"]
    assert shown["knowledge"] == rec["knowledge"]
    assert shown["status"].startswith("status ok") and not shown["console_errors"]
    assert shot.stat().st_size > 10_000
