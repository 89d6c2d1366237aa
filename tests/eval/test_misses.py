"""Misses grouped by wording (rra.eval.misses): the wording masks topics and numbers, groups count
what answered each wording and how often it was asked, plans show their form without values, and the
summary, the dashboards and the command line show the groups."""
import json

from rra.eval.misses import chosen, main, miss_groups, short, wording
from rra.eval.report import summary_markdown

DBO = "http://dbpedia.org/ontology/"


def row(qid, question, mentions, answered, gold="g", path=None, gold_path=None, status="ok", **extra):
    return {"qid": qid, "question": question, "answers": [answered], "gold_answers": [gold] if gold else [],
            "status": status, "pred_path": path, "gold_path": gold_path,
            "extra": {"linking": {"mentions": mentions}, **extra}}


def test_wording_masks_mentions_brackets_and_numbers():
    assert wording(row("1", "Who issued Hollow Compass?", ["Hollow Compass"], "x")) == "who issued [E]"
    assert wording(row("2", "who ISSUED hollow compass", ["Hollow Compass"], "x")) == "who issued [E]"
    # the longer of two overlapping mentions first, several anchors, values of conditions
    q = row("3", "Papers by Ana Lee at New York City Forum after 2015.", ["New York", "New York City Forum", "Ana Lee"], "x")
    assert wording(q) == "papers by [E] at [E] after [N]"
    assert wording(row("4", "which films did [Ridley Scott] direct", [], "x")) == "which films did [E] direct"
    assert wording(row("5", "what did R2-D2 say in 1977", ["R2-D2"], "x")) == "what did [E] say in [N]"


def test_misses_group_by_wording_and_what_answered_them():
    preds = [
        row("a", "Who issued Hollow Compass?", ["Hollow Compass"], "x", path=[DBO + "artist"]),
        row("b", "who issued Glass Meridian", ["Glass Meridian"], "x", path=[DBO + "artist"]),
        row("c", "Who issued Northern Harbour?", ["Northern Harbour"], "g", path=[DBO + "recordLabel"]),
        row("d", "What passport does Ana Lee hold", ["Ana Lee"], "x", path=[DBO + "award"],
            gold_path=[DBO + "nationality"]),
        row("e", "What passport does Bo Kim hold", ["Bo Kim"], "x", path=["^" + DBO + "keyPerson"],
            gold_path=[DBO + "nationality"]),
        row("f", "What passport does Cy Wu hold", ["Cy Wu"], "x", status="no_path"),
        row("g", "unlabelled question about Dee", ["Dee"], "x", gold=None),  # no gold: not scored
    ]
    groups = miss_groups(preds)
    assert [(g.wording, g.chosen, g.misses, g.asked) for g in groups] == [
        ("who issued [E]", "artist", 2, 3),  # two of the three asked, both read as artist
        ("what passport does [E] hold", "(failed: no_path)", 1, 3),
        ("what passport does [E] hold", "^keyPerson", 1, 3),
        ("what passport does [E] hold", "award", 1, 3),
    ]
    assert groups[0].qids == ["a", "b"] and groups[0].example == "Who issued Hollow Compass?"
    assert groups[0].gold is None and groups[3].gold == "nationality"
    assert miss_groups([row("h", "who wrote X", ["X"], "g")]) == []  # nothing missed, no group


def test_a_plan_is_shown_by_its_form_not_its_values():
    plan = {"shape": "anchors_condition", "paths": [["^written_in"], ["^" + DBO + "award"]],
            "constraint": {"relation": "published_in", "op": ">", "value": 1972}}
    p = row("p", "books in Norvessan that won X after 1972", ["Norvessan", "X"], "x", plan=plan,
            plan_kind="anchors_condition", path=["^written_in"])
    assert chosen(p) == "anchors_condition: ^written_in & ^award, published_in >"
    two = {**plan, "shape": "two_conditions", "paths": [["^published_by"]], "constraints": [
        {"relation": "published_in", "op": ">", "value": 1975}, {"relation": "published_in", "op": "<", "value": 2009}]}
    assert chosen(row("q", "", [], "x", plan=two)) == "two_conditions: ^published_by, published_in >, published_in <"
    chain = row("r", "", [], "x", plan={"shape": "chain", "paths": [["a", "b"]]}, plan_kind="chain", path=["a", "b"])
    assert chosen(chain) == "a > b" and chosen(row("s", "", [], "x")) == "(no path)"
    assert short("^http://x.org/onto#birthPlace") == "^birthPlace" and short("directed_by") == "directed_by"


def test_summary_tables_the_largest_groups_and_names_the_command():
    preds = [row(str(i), f"who issued Album {i}", [f"Album {i}"], "x", path=["artist"]) for i in range(3)]
    preds += [row(f"w{i}", f"where was P{i} born", [f"P{i}"], "x", path=[f"r{i}"]) for i in range(12)]
    groups = miss_groups(preds)
    text = summary_markdown({"n": 15}, setup={"output": "outputs/infer/run1"}, miss_groups=groups)
    assert "15 misses in 13 groups" in text and "python -m rra.eval.misses outputs/infer/run1" in text
    assert "| who issued \\[E\\] | artist | 3 | 3 |  |" in text  # the largest first, masks escaped
    assert sum(line.startswith("| where was") for line in text.splitlines()) == 9  # 10 rows shown
    assert "Misses by wording" not in summary_markdown({"n": 1})


def test_command_line_prints_the_groups_and_names_a_missing_run(tmp_path, capsys):
    preds = [row("a", "Who issued Hollow Compass?", ["Hollow Compass"], "x", path=["artist"]),
             row("b", "who issued Glass Meridian", ["Glass Meridian"], "x", path=["artist"])]
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in preds))
    assert main([str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert "2 misses in 1 groups" in out and "who issued [E]  ->  artist" in out
    assert main([str(tmp_path / "run"), "--json"]) == 0
    line = json.loads(capsys.readouterr().out.splitlines()[0])
    assert line["misses"] == 2 and line["qids"] == ["a", "b"]
    assert main([str(tmp_path / "nope")]) == 2
    assert "nope" in capsys.readouterr().err
