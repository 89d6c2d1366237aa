"""Entity linking without `[brackets]`: how often the gold topic entity is found, and ranked first.

Questions keep their words but lose their `[...]` marks (`strip_brackets`), so the topic must be found
from the text (`method.use_gold_topic=false`). Three rankings of the same lexical candidates:
- longest_first: the longest matching n-gram (what rra did before candidates were ranked);
- ranked: rra.linking's rank (common and relation words demoted, case-exact, longer first);
- retriever (with --ckpt): the RRA pipeline's choice among the first 3 candidates, by the best
  predicted path with an instance from each (what infer.py does with use_gold_topic=false).
Data: MetaQA test (1/2/3-hop; the retriever was trained on the **dev** split) and the built-in test split.

    python -m bench.bench_linking metaqa --ckpt checkpoints/metaqa/best.ckpt [--limit 2000]
    python -m bench.bench_linking builtin --ckpt checkpoints/retriever/best.ckpt
Results are merged into bench/results/bench_linking.json (a record per data set).
"""
from __future__ import annotations

import json
import random
import time
from pathlib import Path

from bench.common import METAQA, RESULTS, Run, arguments, data_semantics, previous, write_json
from rra.linking import distinct_entities, link_entities, relation_vocabulary
from rra.text.questions import strip_brackets



def lexical_figures(kg, examples) -> dict:
    """found / first-ranked shares for the longest-first and ranked orders (percent)."""
    n = found = ranked = longest = 0
    start = time.perf_counter()
    words = relation_vocabulary(kg)
    for ex in examples:
        gold = ex.topic_entities[0]
        link = link_entities(kg, strip_brackets(ex.question), rel_words=words)
        n += 1
        cands = distinct_entities(link.candidates)
        found += any(c.entity == gold for c in cands)
        ranked += bool(cands) and cands[0].entity == gold
        by_length = sorted(link.candidates, key=lambda c: (-c.words, -len(c.mention), c.start))
        longest += bool(by_length) and by_length[0].entity == gold
    return {"n": n, "topic_found": 100 * found / n, "ranked_first": 100 * ranked / n,
            "longest_first": 100 * longest / n, "seconds": round(time.perf_counter() - start, 2)}


def retriever_figures(kg, examples, ckpt: str, semantics, batch_size: int) -> dict:
    """The pipeline's own choice (use_gold_topic=false): topic linked first = gold, and Hits@1."""
    from rra.pipeline.answer import GraphScorer
    from rra.eval.metrics import compute_metrics
    from rra.eval.run import answer_all
    from rra.pipeline.method import RRAPipeline
    from rra.records import QAExample
    from rra.pipeline.retrieve import PathRetrieval
    from rra.pipeline.rewrite import TripleRewriter

    retrieval = PathRetrieval.from_checkpoint(ckpt, semantics=semantics)
    pipe = RRAPipeline(kg, retrieval, TripleRewriter(), GraphScorer(), use_gold_topic=False)
    plain = [QAExample(strip_brackets(ex.question), [], ex.answers, qid=ex.qid) for ex in examples]
    preds, start = [], time.perf_counter()
    preds = [p for _, p in answer_all(pipe, plain, batch_size)]
    first = sum(bool(p.topic_entities) and p.topic_entities[0] == ex.topic_entities[0] for p, ex in zip(preds, examples))
    changed = sum(p.extra.get("linking", {}).get("chosen_by") == "retriever" for p in preds)
    m = compute_metrics(preds)
    return {"topic_first": 100 * first / len(examples), "chosen_by_retriever": changed,
            "hits@1_unmarked": m["hits@1"], "seconds": round(time.perf_counter() - start, 2), "ckpt": ckpt}


def sample(examples, limit: int | None, seed: int = 0):
    if limit is None or len(examples) <= limit:
        return examples
    return random.Random(seed).sample(examples, limit)


def question_sets(data: str, root: str) -> tuple:
    """(KG, {set name: test questions}, answer rule) of MetaQA (1/2/3-hop) or the built-in KG."""
    if data == "metaqa":
        from rra.data.metaqa import load_metaqa
        from rra.graph import load_graph

        sets = {f"{h}hop": load_metaqa(root, hops=[h], split="test") for h in (1, 2, 3)}
        return load_graph(Path(root) / "kb.txt"), sets, data_semantics("metaqa")
    from rra.data.builtin import builtin_questions, load_builtin_graph

    return load_builtin_graph(), {"test": builtin_questions("test")}, data_semantics("builtin")


def parser():
    """The command line of `python -m bench.bench_linking`."""
    ap = arguments("bench_linking", __doc__)
    ap.add_argument("data", choices=["metaqa", "builtin"])
    ap.add_argument("--root", default=str(METAQA))
    ap.add_argument("--ckpt", default=None, help="retriever checkpoint: also measure the pipeline's choice")
    ap.add_argument("--limit", type=int, default=None, help="seeded sample of each hop set (retriever part)")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--out", default=str(RESULTS / "bench_linking.json"), help="merged: one record per data set")
    return ap


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    run = Run.start("bench_linking", args, argv)
    kg, sets, semantics = question_sets(args.data, args.root)
    figures = {}
    for name, examples in sets.items():
        figures[name] = lexical_figures(kg, examples)
        if args.ckpt:
            figures[name]["retriever"] = retriever_figures(kg, sample(examples, args.limit), args.ckpt,
                                                           semantics, args.batch_size)
            figures[name]["retriever"]["n"] = min(len(examples), args.limit or len(examples))
        print(name, json.dumps(figures[name]))
    # one record per data set, each with its own command and machine (bench_linking.json holds both)
    one = run.record({"figures": figures,
                      "note": "questions with their [brackets] removed; topic_found = gold topic among the lexical "
                              "candidates, ranked_first / longest_first = first by rra's rank / by mention length; "
                              "retriever = the RRA pipeline's pick (use_gold_topic=false). MetaQA: test split, "
                              "retriever trained on the dev split."})
    write_json({**previous(args.out), args.data: one}, args.out)


if __name__ == "__main__":
    main()
