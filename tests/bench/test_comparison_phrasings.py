"""bench_comparison_phrasings rewrites each comparison question of a plans test file with a phrasing
of its operator and kind, the same anchor's label (N-Triples escapes read), literal and answers."""
import json

from bench.bench_comparison_phrasings import PHRASINGS, rephrase


def test_comparisons_are_rephrased_with_the_same_anchor_literal_and_answers(tmp_path):
    (tmp_path / "kg.nt").write_text('<http://x/P1> <http://www.w3.org/2000/01/rdf-schema#label> "Ren\\u00E9e Ko" .\n',
                                    encoding="utf-8")
    rows = [{"question": "what did Renée Ko write after 2001", "topic_entities": ["http://x/P1"], "answers": ["http://x/a"],
             "qid": "q1", "shape": "comparison", "constraint": {"relation": "year", "op": ">", "value": 2001},
             "extra": {"kind": "author_year", "template": "what did {A} write after {N}"}},
            {"question": "a chain", "topic_entities": ["http://x/P1"], "answers": ["x"], "qid": "q2", "shape": "chain"}]
    (tmp_path / "plans_test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    got = rephrase(tmp_path)
    assert len(got) == 1 and got[0]["answers"] == ["http://x/a"] and got[0]["qid"] == "q1-rephrased"
    assert got[0]["question"] in [p.format(A="Renée Ko", N=2001) for p in PHRASINGS["author_year"][">"]]
    assert got[0]["question"] != rows[0]["question"] and got[0]["extra"]["seen_phrasing"] is False
