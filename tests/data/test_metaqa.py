import pytest

from rra.data.metaqa import MOVIE_RELATION, load_metaqa, parse_question_line, qtype_to_path
from rra.records import DataFormatError


def write_metaqa(root, hop, split, qa_lines, qtype_lines=None):
    d = root / f"{hop}-hop"
    (d / "vanilla").mkdir(parents=True, exist_ok=True)
    (d / "vanilla" / f"qa_{split}.txt").write_text("".join(l + "\n" for l in qa_lines))
    if qtype_lines is not None:
        (d / f"qa_{split}_qtype.txt").write_text("".join(l + "\n" for l in qtype_lines))


def test_qtype_to_path_directions():
    assert qtype_to_path("movie_to_director") == ["directed_by"]
    assert qtype_to_path("director_to_movie_to_language") == ["^directed_by", "in_language"]
    assert qtype_to_path("movie_to_actor_to_movie_to_year") == ["starred_actors", "^starred_actors", "release_year"]
    assert qtype_to_path("tag_to_movie") == ["^has_tags"]
    with pytest.raises(ValueError, match="actor -> director"):
        qtype_to_path("actor_to_director")


def test_parse_line_keeps_marking_and_dedupes_answers():
    q, topic, answers = parse_question_line("what did [Ann Lee] direct\tX|Y|X", "f:1")
    assert q == "what did [Ann Lee] direct" and topic == "Ann Lee" and answers == ["X", "Y"]


@pytest.mark.parametrize(
    "line, problem",
    [("no tab here", "question<TAB>answers"), ("no topic\tX", "no topic entity"),
     ("empty [] topic\tX", "no topic entity"), ("who [A]\t", "no answers")],
)
def test_parse_line_errors_name_file_and_line(line, problem):
    with pytest.raises(DataFormatError, match=f"qa.txt:7: .*{problem}"):
        parse_question_line(line, "qa.txt:7")


def test_load_small_files(tmp_path):
    write_metaqa(tmp_path, 2, "dev", ["films by the director of [M1]\tM2|M3", "what [D1] wrote in\tEnglish"],
                 ["movie_to_director_to_movie", "writer_to_movie_to_language"])
    exs = load_metaqa(tmp_path, hops=(2,), split="dev")
    assert [e.qid for e in exs] == ["metaqa-2hop-dev-0", "metaqa-2hop-dev-1"]
    assert exs[0].topic_entities == ["M1"] and exs[0].answers == ["M2", "M3"] and exs[0].hops == 2
    assert exs[0].relation_path == ["directed_by", "^directed_by"] == exs[0].gold_path
    assert exs[1].source.endswith("2-hop/vanilla/qa_dev.txt:2")
    assert load_metaqa(tmp_path, hops=(2,), split="dev", limit=1, with_gold_paths=False)[0].relation_path is None


def test_load_errors(tmp_path):
    write_metaqa(tmp_path, 1, "dev", ["who directed [M1]\tD1", "broken line"], ["movie_to_director", "movie_to_director"])
    with pytest.raises(DataFormatError, match=r"qa_dev.txt:2"):
        load_metaqa(tmp_path, hops=(1,), split="dev")
    write_metaqa(tmp_path, 1, "test", ["who directed [M1]\tD1"], ["movie_to_director", "movie_to_year"])
    with pytest.raises(DataFormatError, match="has 2 lines"):
        load_metaqa(tmp_path, hops=(1,), split="test")
    write_metaqa(tmp_path, 3, "dev", ["who directed [M1]\tD1"], ["movie_to_budget"])
    with pytest.raises(DataFormatError, match=r"qa_dev_qtype.txt:1: .*movie_to_budget"):
        load_metaqa(tmp_path, hops=(3,), split="dev")
    write_metaqa(tmp_path, 2, "dev", ["who directed [M1]\tD1"], ["movie_to_director"])
    with pytest.raises(DataFormatError, match="not 2-hop"):
        load_metaqa(tmp_path, hops=(2,), split="dev")
    with pytest.raises(FileNotFoundError, match="ntm"):
        load_metaqa(tmp_path, hops=(1,), split="dev", variant="ntm")
    with pytest.raises(ValueError, match="split"):
        load_metaqa(tmp_path, split="validation")


@pytest.mark.shared_data
def test_every_real_qtype_maps_to_a_kb_relation_path(metaqa_root):
    kb_relations = {line.split("|")[1] for line in (metaqa_root / "kb.txt").open()}
    seen = set()
    for hop in (1, 2, 3):
        for split in ("train", "dev", "test"):
            qtypes = {l.strip() for l in (metaqa_root / f"{hop}-hop/qa_{split}_qtype.txt").open()}
            for qt in qtypes:
                path = qtype_to_path(qt)
                assert len(path) == hop and {r.lstrip("^") for r in path} <= kb_relations, qt
            seen |= qtypes
    assert len(seen) == 13 + 21 + 15  # the qtype vocabulary of MetaQA, all handled
    assert set(MOVIE_RELATION.values()) == kb_relations


@pytest.mark.shared_data
def test_real_metaqa_with_limit(metaqa_root):
    exs = load_metaqa(metaqa_root, split="test", limit=20)
    assert len(exs) == 60 and {e.hops for e in exs} == {1, 2, 3}
    assert all(f"[{e.topic_entities[0]}]" in e.question and e.answers for e in exs)
    assert all(len(e.relation_path) == e.hops for e in exs)
    ntm = load_metaqa(metaqa_root, hops=(1,), split="dev", variant="ntm", limit=5)
    vanilla = load_metaqa(metaqa_root, hops=(1,), split="dev", limit=5)
    assert [e.answers for e in ntm] == [e.answers for e in vanilla]  # line-aligned paraphrases


def test_metaqa_ntm_config_tests_the_paraphrases_and_trains_on_vanilla(compose_cfg):
    cfg = compose_cfg("infer", ["data=metaqa_ntm"])
    assert cfg.data.test.variant == "ntm" and list(cfg.data.test.hops) == [1]
    assert cfg.data.train.get("variant", "vanilla") == "vanilla" and cfg.data.train.split == "dev"
    assert cfg.data.semantics.topic_can_be_answer == "one_hop"  # MetaQA's answer rule, from data=metaqa


@pytest.mark.shared_data
def test_metaqa_ntm_config_loads_the_ntm_test_file(compose_cfg, metaqa_root):
    from hydra.utils import instantiate

    cfg = compose_cfg("infer", ["data=metaqa_ntm", f"data.root={metaqa_root}"])
    ntm = instantiate(cfg.data.test)(limit=3)
    vanilla = load_metaqa(metaqa_root, hops=(1,), split="test", limit=3)
    assert [e.answers for e in ntm] == [e.answers for e in vanilla]
    assert [e.question for e in ntm] != [e.question for e in vanilla]
    assert all(e.source.endswith(f"ntm/qa_test.txt:{i + 1}") for i, e in enumerate(ntm))
