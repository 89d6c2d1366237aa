import pytest

from rra.baselines import KGQP, LLMOnly, VectorRAG
from rra.baselines.kgqp import look_up
from rra.baselines.vector import chunk_sentences
from rra.llm.fake import ScriptedLLM
from rra.records import QAExample


def test_look_up_exact_then_casefold_then_substring(kg):
    assert look_up(kg, "Alien") == ["Alien"]
    assert look_up(kg, "ridley scott") == ["Ridley Scott"]
    assert look_up(kg, "weaver") == ["Sigourney Weaver"]
    assert look_up(kg, "nobody at all") == []


def test_kgqp_llm_identifies_reads_facts_answers(kg, weaver_question):
    llm = ScriptedLLM(["Entities: sigourney weaver", "The answer is Ridley Scott and James Cameron."])
    pred = KGQP(kg, llm).answer(weaver_question)
    assert pred.llm_calls == 2 and pred.status == "ok"
    assert pred.topic_entities == ["Sigourney Weaver"] and pred.extra["identified_by"] == "llm"
    assert pred.answers == ["Ridley Scott", "James Cameron"]
    assert {t.tail for t in pred.triples} >= {"Ridley Scott", "James Cameron"}  # 2 hops gathered
    assert "rdf:type" not in pred.knowledge


def test_kgqp_falls_back_to_lexical_when_llm_names_nothing(kg):
    q = QAExample("who starred in Blade Runner", [], ["Harrison Ford"], qid="b")
    llm = ScriptedLLM(["", "Harrison Ford"])
    pred = KGQP(kg, llm, hops=1).answer(q)
    assert pred.extra["identified_by"] == "lexical" and pred.topic_entities == ["Blade Runner"]
    assert pred.answers == ["Harrison Ford"] and pred.status == "unparseable"
    assert any("entity list" in e for e in pred.errors)


def test_kgqp_heuristic(kg, weaver_question, tiny_encoder):
    pred = KGQP(kg, None, tiny_encoder).answer(weaver_question)
    assert pred.llm_calls == 0 and pred.extra["identified_by"] == "lexical"
    assert pred.answers and "Sigourney Weaver" not in pred.answers
    assert set(pred.answers) <= set(pred.extra["visited"])


def test_chunks_are_100_tokens_with_5_percent_overlap(tiny_encoder):
    tok = tiny_encoder.tokenizer
    sentences = [f"Movie {i} directed by Person {i % 7}." for i in range(200)]
    chunks = chunk_sentences(sentences, tok, 100, 0.05)
    stream = tok(" ".join(sentences), add_special_tokens=False)["input_ids"]
    assert len(stream) > 300
    expected = [stream[i:i + 100] for i in range(0, len(stream), 95)]
    expected = expected[: next(k for k, e in enumerate(expected) if len(e) < 100 or 95 * k + 100 >= len(stream)) + 1]
    got = [tok(c.text, add_special_tokens=False)["input_ids"] for c in chunks]
    assert got == expected
    assert all(len(g) == 100 for g in got[:-1])
    assert got[0][95:] == got[1][:5]  # 5 shared tokens
    assert chunks[0].first_fact == 0 and chunks[-1].last_fact == len(sentences) - 1


def test_vector_index_cache_and_heuristic_answer(kg, weaver_question, tiny_encoder, tmp_path):
    v = VectorRAG(kg, encoder=tiny_encoder, chunk_tokens=20, top_k=2, cache_dir=str(tmp_path))
    pred = v.answer(weaver_question)
    assert pred.status == "ok" and pred.llm_calls == 0 and len(pred.extra["chunks"]) == 2
    assert pred.answers and "Sigourney Weaver" not in pred.answers
    assert not v.index_from_cache and list(tmp_path.glob("vector-*.pt"))
    w = VectorRAG(kg, encoder=tiny_encoder, chunk_tokens=20, top_k=2, cache_dir=str(tmp_path))
    again = w.answer(weaver_question)
    assert w.index_from_cache and again.answers == pred.answers
    assert "Movie" not in " ".join(c.text for c in w.chunks)  # rdf:type facts are not indexed


def test_vector_llm_mode(kg, weaver_question, tiny_encoder):
    llm = ScriptedLLM(["Ridley Scott"])
    pred = VectorRAG(kg, llm, tiny_encoder, chunk_tokens=20, top_k=2, cache_dir=None).answer(weaver_question)
    assert pred.llm_calls == 1 and pred.answers[0] == "Ridley Scott" and pred.reply == "Ridley Scott"
    assert pred.knowledge and pred.knowledge in llm.prompt_texts[0]


@pytest.mark.parametrize("reply, answers, status", [
    ("1. Ridley Scott\n2. James Cameron", ["Ridley Scott", "James Cameron"], "ok"),
    ('{"answer": ["Ridley Scott"]}', ["Ridley Scott"], "ok"),
    ("", [], "unparseable"),
    (ScriptedLLM.failure(), [], "llm_error"),
])
def test_llm_only(weaver_question, reply, answers, status):
    llm = ScriptedLLM([reply])
    pred = LLMOnly(llm).answer(weaver_question)
    assert pred.answers == answers and pred.status == status and pred.llm_calls == 1
    assert "Knowledge" not in llm.prompt_texts[0]
