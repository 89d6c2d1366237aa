"""A dataset's names for opaque relation ids (`data.relation_labels`), or the KG's own: what every
method shows to LLMs and encoders instead of `P50`."""
import pytest

from rra.graph import KGFormatError, NetworkXGraph, Triple
from rra.llm import ScriptedLLM
from rra.records import QAExample
from rra.text.relations import relation_display, relation_names, relation_phrase, relation_words

NAMES = {"P50": "author", "P19": "place of birth"}


def kg(named_by_kg: bool = False):
    """The KG; `named_by_kg`: it names its relations itself (as an rdfs:label on a property, or
    Wikidata's wd:P19 naming wdt:P19, reach `relation_labels`), and the data config names none."""
    return NetworkXGraph([Triple("Q1", "P50", "Q2"), Triple("Q2", "P19", "Q3")],
                         labels={"Q1": "The Road", "Q2": "Ann Reed", "Q3": "Port Ellery",
                                 **(NAMES if named_by_kg else {})})


# where the names come from: the data config (`data.relation_labels`), or the KG itself
SOURCES = pytest.mark.parametrize("named_by_kg", [False, True], ids=["config", "kg"])


def test_names_from_a_mapping_or_a_tsv_file(tmp_path):
    assert relation_names(None) == {} and relation_names(NAMES) == NAMES
    f = tmp_path / "rel.tsv"
    f.write_text("P50\tauthor\nP19\tplace of birth \n")
    assert relation_names(str(f)) == NAMES
    f.write_text("P50\tauthor\nP19 place of birth\n")
    with pytest.raises(KGFormatError, match=r"rel.tsv:2: expected id<TAB>label: 'P19 place of birth'"):
        relation_names(str(f))
    assert relation_display("^P50", NAMES) == "author (reverse)" and relation_phrase("P19", NAMES) == "place of birth"
    assert relation_words("^P19", NAMES) == "place of birth" and relation_words("^P50") == "p50"
    assert relation_display("^directed_by", NAMES) == "directed_by (reverse)"  # unnamed: as before


@SOURCES
def test_rra_rewriters_read_the_names(named_by_kg):
    from rra.pipeline.answer import GraphScorer
    from rra.pipeline.method import RRAPipeline
    from rra.pipeline.retrieve import PathRetrieval
    from rra.pipeline.rewrite import TemplateRewriter, TripleRewriter

    class Path:
        def __init__(self, path):
            self.path, self.score, self.hop = path, 0.9, len(path)

    class AuthorsBirthplace:
        def predict(self, questions, topk, hops=None, try_second_hop=False):
            return [[Path(["P50", "P19"])] for _ in questions]

    ex = QAExample("where was the author of [The Road] born", ["Q1"], ["Q3"], qid="1")
    for rewriter, text in ((TripleRewriter(), "(Ann Reed, place of birth, Port Ellery)"),
                           (TemplateRewriter(), "Ann Reed place of birth Port Ellery."),
                           (TemplateRewriter({"place of birth": "{head} was born in {tail}"}), "Ann Reed was born in Port Ellery.")):
        pipe = RRAPipeline(kg(named_by_kg), PathRetrieval(AuthorsBirthplace()), rewriter, GraphScorer(),
                           relation_labels=None if named_by_kg else NAMES)
        (pred,) = pipe.answer_batch([ex])
        assert text in pred.knowledge and "P19" not in pred.knowledge and pred.answers == ["Q3"]
        assert [t.relation for t in pred.triples] == ["P50", "P19"]  # the evidence keeps the KG's ids


@SOURCES
def test_baselines_show_names_and_read_the_choice_back(named_by_kg):
    from rra.baselines import ToG

    llm = ScriptedLLM({"Relations": "1. author (score 1.0)", "Is the knowledge enough": "Yes. Answer: Ann Reed",
                       "entities": "1"}, default="Ann Reed")
    ex = QAExample("who is the author of [The Road]", ["Q1"], ["Q2"], qid="1")
    pred = ToG(kg(named_by_kg), llm, depth=1, relation_labels=None if named_by_kg else NAMES).answer(ex)
    assert "author" in llm.prompt_texts[0] and "P50" not in llm.prompt_texts[0]
    assert pred.paths and pred.paths[0]["relations"] == ["P50"]
    assert "(The Road, author, Ann Reed)" in pred.knowledge


def test_the_data_config_reaches_every_method(cfg_infer):
    for method in ("rra", "tog", "structgpt", "kgqp", "vector"):
        cfg = cfg_infer(["data=files", "data.kb_path=kb.tsv", f"method={method}", "+data.relation_labels.P50=author"])
        assert dict(cfg.method.relation_labels) == {"P50": "author"}, method
