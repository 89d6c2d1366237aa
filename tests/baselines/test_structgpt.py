from rra.baselines import StructGPT
from rra.llm.fake import ScriptedLLM


def script(prompt: str) -> str:
    if "Choose the relations" in prompt:
        return "I would follow directed_by."
    if "Which of these knowledge graph triples" in prompt:
        return "1"
    if "can you answer" in prompt:
        return "Yes. Answer: Ridley Scott | James Cameron" if "directed_by" in prompt.rsplit("Triples:", 1)[1] else "No"
    return "Ridley Scott"


def test_reads_selects_checks_and_keeps_history(kg, weaver_question):
    llm = ScriptedLLM(script)
    pred = StructGPT(kg, llm).answer(weaver_question)
    # iteration 1: Weaver has one relation (no choice), 2 triples (no filter), check -> No;
    # iteration 2: select among directed_by/has_genre/release_year, 2 triples, check -> Yes
    assert pred.llm_calls == len(llm.prompts) == 3
    assert pred.extra["relation_history"] == [["^starred_actors"], ["directed_by"]]
    assert pred.extra["visited"] == ["Sigourney Weaver", "Alien", "Aliens", "Ridley Scott", "James Cameron"]
    assert pred.answers == ["Ridley Scott", "James Cameron"] and pred.status == "ok"
    assert {t.tail for t in pred.triples} >= {"Ridley Scott", "James Cameron"}
    # bidirectional: the incoming starred_actors edge was offered and walked
    assert pred.extra["relation_history"][0] == ["^starred_actors"]


def test_llm_filters_triples_when_too_many(kg, weaver_question):
    llm = ScriptedLLM(script)
    pred = StructGPT(kg, llm, max_triples=1).answer(weaver_question)
    # iteration 1 reads 2 triples > 1: a filter call keeps triple 1 (Alien) only; iteration 2
    # reads Alien's single director (no filter): filter, check, select, check
    assert sum("Which of these knowledge graph triples" in p for p in llm.prompt_texts) == 1
    assert pred.llm_calls == 4
    assert pred.extra["visited"] == ["Sigourney Weaver", "Alien", "Ridley Scott"]
    assert pred.answers[0] == "Ridley Scott"


def test_unparseable_selection_is_recorded(kg, weaver_question):
    llm = ScriptedLLM({"Choose the relations": "hmm, hard to say!", "can you answer": "No", "Answer:": ""})
    pred = StructGPT(kg, llm, max_iterations=2).answer(weaver_question)
    assert pred.status == "unparseable" and pred.answers == []
    assert any("relation choice" in e for e in pred.errors) and any("answer" in e for e in pred.errors)
    assert pred.llm_calls == len(llm.prompts)


def test_heuristic_deterministic(kg, weaver_question, tiny_encoder):
    a = StructGPT(kg, None, tiny_encoder).answer(weaver_question)
    b = StructGPT(kg, None, tiny_encoder).answer(weaver_question)
    assert a.llm_calls == 0 and a.extra["mode"] == "heuristic"
    assert a.answers == b.answers and a.extra["relation_history"] == b.extra["relation_history"]
    assert a.extra["relation_history"][0] == ["^starred_actors"]
    assert set(a.answers) == set(a.extra["visited"]) - {"Sigourney Weaver"}
    assert a.answers[0] in a.answer_set
