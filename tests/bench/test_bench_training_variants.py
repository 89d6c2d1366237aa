"""bench_training_variants counts a path miss as 'one relation reversed' only when the rest of the path is gold."""
import json

from bench.bench_training_variants import misses


def test_misses_split_reversed_relations_from_the_rest(tmp_path):
    rows = [("a", ["starred_actors", "^starred_actors", "written_by"], ["starred_actors", "^starred_actors", "^written_by"]),
            ("b", ["^written_by", "starred_actors"], ["^written_by", "starred_actors"]),          # right
            ("c", ["^written_by", "starred_actors"], ["^directed_by", "^starred_actors"]),       # two differ
            ("d", ["directed_by"], ["directed_by", "^directed_by"]),                              # longer
            ("e", None, ["x"]),                                                                  # no gold: not counted
            ("f", ["written_by", "starred_actors"], ["^written_by", "starred_actors"])]          # reversed first step
    f = tmp_path / "p.jsonl"
    f.write_text("".join(json.dumps({"qid": q, "gold_path": g, "pred_path": p}) + "\n" for q, g, p in rows))
    assert misses(f) == {"questions": 5, "path_misses": 4, "one_relation_reversed": 2,
                         "reversed_after_a_reversed_step": 1}  # a: after ^starred_actors; f: the first step
