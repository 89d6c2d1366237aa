"""The oracle LLM (`llm=oracle`): every prompt type of every method answered as a perfect model
would, from the gold labels the evaluation loop gives it; and what it revealed in the baselines."""
import pytest

from rra.baselines import KGQP, StructGPT, ToG
from rra.records import QAExample
from rra.graph.base import Triple
from rra.graph.networkx_graph import NetworkXGraph
from rra.llm.oracle import OracleLLM
from rra.llm.parse import committed_answers
from rra.text.prompts import OWN_KNOWLEDGE_PROMPT, RRA_ANSWER_PROMPT, TRIPLES_ANSWER_PROMPT

FACTS = [("m1", "directed_by", "d1"), ("m2", "directed_by", "d1"), ("m3", "directed_by", "d2"),
         ("m1", "release_year", "y1979"), ("m2", "release_year", "y1982"), ("m3", "has_genre", "g1")]
LABELS = {"m1": "Alien", "m2": "Blade Runner", "m3": "Titanic", "d1": "Ridley Scott", "d2": "James Cameron",
          "y1979": "1979", "y1982": "1982", "g1": "Drama"}


@pytest.fixture
def kg():
    return NetworkXGraph([Triple(*f) for f in FACTS], labels=LABELS)


def siblings_question():
    """A MetaQA 2-hop shape: out over an edge, back over the same relation to the siblings."""
    return QAExample("which films share the director of [Alien]", ["m1"], ["m2"], ["directed_by", "^directed_by"],
                     qid="s1", hops=2, extra={"answer_labels": ["Blade Runner"], "gold_path": ["directed_by", "^directed_by"]})


def oracle_for(kg, *examples):
    llm = OracleLLM()
    llm.observe(list(examples), kg)
    return llm


def test_final_answers_name_only_gold_the_knowledge_holds(kg):
    ex = siblings_question()
    llm = oracle_for(kg, ex)
    knows = RRA_ANSWER_PROMPT.format(knowledge="Blade Runner was directed by Ridley Scott.", question="which films share the director of Alien")
    lacks = TRIPLES_ANSWER_PROMPT.format(question="which films share the director of Alien", knowledge="(Alien, directed_by, Ridley Scott)")
    own = OWN_KNOWLEDGE_PROMPT.format(question="which films share the director of Alien")
    assert [r.text for r in llm.generate([knows, lacks, own])] == ["Blade Runner", "unknown", "unknown"]
    assert llm.score(knows, [" Blade Runner", " Alien"]) == [0.0, -100.0]
    unseen = llm.generate([RRA_ANSWER_PROMPT.format(knowledge="", question="who is this")])[0]
    assert not unseen.ok and "not observed" in unseen.error
    assert llm.usage.calls == 5


@pytest.mark.parametrize("method", [ToG, StructGPT])
def test_walkers_reach_siblings_over_the_edge_they_came_by(kg, method):
    """Found by the oracle: ToG and StructGPT never offered the relation they arrived over, walked
    back, so 'films by the same director' (MetaQA's commonest 2-hop shape) was out of reach."""
    ex = siblings_question()
    llm = oracle_for(kg, ex)
    pred = method(kg, llm).answer(ex)
    assert pred.answers[:1] == ["m2"] and pred.status == "ok"
    assert committed_answers(pred.reply) == ["Blade Runner"]  # strict scoring reads it too
    assert "m1" not in pred.answers  # the entity it came from is never an answer


def test_kgqp_identifies_the_topic_and_answers(kg):
    ex = QAExample("who directed [Titanic]", ["m3"], ["d2"], ["directed_by"], qid="k1",
                   extra={"answer_labels": ["James Cameron"]})
    llm = oracle_for(kg, ex)
    pred = KGQP(kg, llm).answer(ex)
    assert pred.answers[:1] == ["d2"]
    assert pred.llm_calls == 2 and pred.status == "ok"


def test_a_verdict_before_the_answer_is_not_the_committed_answer():
    """ToG's own reply format: strict Hits@1 read "{Yes}" as the answer before."""
    assert committed_answers("{Yes}. Answer: Ridley Scott | James Cameron") == ["Ridley Scott", "James Cameron"]
    assert committed_answers("Yes. Answer: 1979") == ["1979"]
    assert committed_answers("Answer: No Country for Old Men") == ["No Country for Old Men"]


def test_entity_choice_keeps_the_entities_that_lead_to_a_gold_answer():
    """Of the films sharing an actor with X, a perfect model keeps the ones that have a language
    when it is asked for one; ToG with a beam of 1 then still answers."""
    facts = [("x", "starred_actors", "a"), ("m1", "starred_actors", "a"), ("m2", "starred_actors", "a"),
             ("m3", "starred_actors", "a"), ("m2", "in_language", "fr"), ("m1", "directed_by", "d")]
    kg = NetworkXGraph([Triple(*f) for f in facts])
    path = ["starred_actors", "^starred_actors", "in_language"]
    ex = QAExample("which languages are the films sharing actors with [x] in", ["x"], ["fr"], path, qid="u1",
                   extra={"gold_path": path})
    pred = ToG(kg, oracle_for(kg, ex), width=1).answer(ex)
    assert pred.answers[:1] == ["fr"] and pred.extra["visited"][:4] == ["x", "a", "m2", "fr"]
