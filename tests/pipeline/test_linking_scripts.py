"""Linking questions written without spaces (issue 35): character n-grams find the topic of a
Chinese or Japanese question, and Latin names inside one, on every backend. The KG is made up here."""
import pytest

from rra.graph import NetworkXGraph, OxigraphGraph, Triple
from rra.linking import TopicLinker, link_entities
from rra.records import QAExample, Status

FACTS = [
    ("卧虎藏龙", "导演", "李安"), ("卧虎藏龙", "主演", "周润发"), ("卧虎藏龙", "上映年份", "2000"),
    ("饮食男女", "导演", "李安"), ("无间道", "主演", "刘德华"), ("无间道", "主演", "梁朝伟"),
    ("无间道", "英文名", "Infernal Affairs"), ("Infernal Affairs", "上映年份", "2002"),
    ("東京物語", "監督", "小津安二郎"), ("李", "姓氏来源", "陇西"),  # a one-character entity
]
QUESTIONS = [
    ("谁导演了卧虎藏龙？", ["卧虎藏龙"]),
    ("《饮食男女》的导演是谁", ["饮食男女"]),
    ("李安导演过哪些电影", ["李安"]),
    ("无间道的主演有谁", ["无间道"]),
    ("刘德华主演的Infernal Affairs是哪年上映的", ["Infernal Affairs", "刘德华"]),
    ("東京物語の監督は誰ですか", ["東京物語"]),
    ("who directed 卧虎藏龙", ["卧虎藏龙"]),
]


@pytest.fixture(params=["networkx", "oxigraph"])
def zh_kg(request):
    triples = [Triple(*t) for t in FACTS]
    return NetworkXGraph(triples) if request.param == "networkx" else OxigraphGraph.from_triples(triples)


@pytest.mark.parametrize("question, topics", QUESTIONS)
def test_a_question_without_spaces_links_its_topic(zh_kg, question, topics):
    link = link_entities(zh_kg, question)
    assert (link.status, link.entities) == (Status.OK, topics), link.candidates


def test_words_between_spaces_alone_find_nothing_in_chinese(zh_kg):
    link = link_entities(zh_kg, "谁导演了卧虎藏龙？", char_ngrams=False)
    assert link.status == Status.NO_TOPIC_ENTITY


def test_a_single_character_is_a_common_word(zh_kg):
    """李 is an entity, but inside 李安 (longer) and alone it ranks as weakly as 'the' would."""
    link = link_entities(zh_kg, "李安的电影")
    assert link.entities == ["李安"] and [c.entity for c in link.candidates if c.common_word] == ["李"]


def test_batched_linking_agrees(zh_kg):
    examples = [QAExample(q, [], [], qid=str(i)) for i, (q, _) in enumerate(QUESTIONS)]
    links = TopicLinker(zh_kg, use_gold_topic=False).link_batch(examples)
    assert [link.entities for link in links] == [topics for _, topics in QUESTIONS]
