"""Numbers in a question are values for conditions, not anchors (issue 35): on a KG whose ages and
shirt numbers are bare TSV cells, the number 13 is also an entity, yet "which players of Real Madrid
wear a number higher than 13" must link Real Madrid and compare with 13."""
import pytest

from rra.graph import load_graph
from rra.linking import TopicLinker, link_anchors, link_entities
from rra.plans.candidates import enumerate_plans
from rra.plans.execution import execute
from rra.plans.plan import Constraint, QueryPlan, question_literals
from rra.plans.reads import Chain
from rra.plans.text import ranker_text
from rra.records import QAExample

PLAYERS = [  # name, club, shirt number, age: every value a bare cell
    ("Ana Ruiz", "Real Madrid", "7", "23"), ("Bea Sol", "Real Madrid", "13", "31"),
    ("Cai Lin", "Real Madrid", "21", "27"), ("Dan Poe", "Celtic", "13", "23"), ("Eva Kim", "Celtic", "30", "19"),
]
QUESTIONS = [  # (question, attribute the condition reads, op, the answers)
    ("which players of Real Madrid wear a number higher than 13", "shirt_number", ">", ["Cai Lin"]),
    ("which players of real madrid wear a number higher than 13", "shirt_number", ">", ["Cai Lin"]),
    ("who plays for Celtic and is younger than 23", "age", "<", ["Eva Kim"]),
    ("which Real Madrid players are at least 27", "age", ">=", ["Bea Sol", "Cai Lin"]),
]


@pytest.fixture(scope="module")
def club_kg(tmp_path_factory):
    path = tmp_path_factory.mktemp("club") / "players.tsv"
    rows = [(p, r, v) for p, club, number, age in PLAYERS
            for r, v in (("plays_for", club), ("shirt_number", number), ("age", age))]
    path.write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in rows), encoding="utf-8")
    return load_graph(path)


@pytest.mark.parametrize("question, attribute, op, answers", QUESTIONS)
def test_a_number_in_the_question_is_the_conditions_value(club_kg, question, attribute, op, answers):
    number = question.split()[-1]
    assert club_kg.has_entity(number)  # the bare cell is an entity of this KG
    link = link_entities(club_kg, question)
    club = "Celtic" if "Celtic" in question else "Real Madrid"
    assert link.entities == [club], link.candidates  # the club, never the number, is the topic
    assert link_anchors(link)[0] == [club]
    literals = question_literals(question, link.mentions)
    assert literals == [number]
    want = Constraint(attribute, op, int(number))  # among the candidates built from the graph
    found = enumerate_plans(club_kg, [Chain(club, ("^plays_for",))], literals, link.entities)
    assert any(c.plan.constraints == [want] and c.answers == answers for c in found)
    assert execute(club_kg, QueryPlan(link.entities[:1], [["^plays_for"]], want)).answers == answers
    read, slots = ranker_text(question, link.mentions)  # what the plan ranker reads: the club masked, 13 a slot
    assert read.count("[E]") == 1 and slots == {number: "[N1]"} and "[N1]" in read


def test_every_link_mention_handed_over_keeps_the_value(club_kg):
    """Where the linker did make the number an anchor (it is the only match), the plan still
    reads it as the value: `question_literals` is given every mention."""
    question = "who wears 13"
    link = link_entities(club_kg, question)
    assert link.entities == ["13"]  # nothing else names an entity: the number is the topic
    assert question_literals(question, link.mentions) == ["13"]
    assert question_literals(QUESTIONS[0][0], ["Real Madrid", "13"]) == ["13"]


def test_batched_linking_agrees(club_kg):
    links = TopicLinker(club_kg, use_gold_topic=False).link_batch(
        [QAExample(q, [], [], qid=str(i)) for i, (q, *_) in enumerate(QUESTIONS)])
    assert [link.entities for link in links] == [["Real Madrid"], ["Real Madrid"], ["Celtic"], ["Real Madrid"]]
