"""Generate 1–3-hop questions over any KG from relation templates: training questions for a KG
that has none, and the built-in data set.

A question is a random walk: a topic entity, then a relation path found by walking the KG from
it, so every path has at least one instance. Its answers are the path's end entities computed from
the KG under the given `AnswerSemantics`, as supervision and retrieval compute them (the general
rule by default; MetaQA's never answers with the topic entity nor walks through it again), and the
question is kept only if there are 1..max_answers of them.
The text nests one template per hop: the last relation gives the question, every earlier one a noun
phrase for the entities reached so far, innermost first, with the topic entity marked `[label]`:
    [born_in, ^set_in] from Ilse Varga -> "which books are set in the birthplace of [Ilse Varga]"

Templates (YAML or JSON, see rra/data/builtin/templates.yaml) give several paraphrases per
relation and direction, so a retriever has to generalise; relations without templates get a
generic fallback built from the relation's name ("what is the {relation words} of {e}").

CLI: python -m rra.data.question_generator KB --out questions.jsonl --n 1000 [--labels L] [--templates T]
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Sequence

from rra.data.question_templates import Phrase, RelationTemplates, Templates, generic_templates
from rra.data.supervision import Adjacency, build_adjacency
from rra.graph.base import base_relation
from rra.records import AnswerSemantics, QAExample

__all__ = ["Phrase", "RelationTemplates", "Templates", "generate_questions", "generic_templates", "path_answers"]


def path_answers(adj: Adjacency, topic: str, path: Sequence[str],
                 semantics: AnswerSemantics | None = None) -> set[str]:
    """End entities of `path` from `topic` under `semantics` (the general rule by default): the
    same ends as the instances of kg.follow_path that `semantics.keeps`."""
    semantics = semantics or AnswerSemantics()
    frontier = {topic}
    for i, relation in enumerate(path):
        step = adj.by_relation.get(relation, {})
        reached: set[str] = set()
        reached.update(*filter(None, map(step.get, frontier)))
        if semantics.drops_topic(i + 1, last=i == len(path) - 1):
            reached.discard(topic)
        frontier = reached
        if not frontier:
            break
    return frontier


def generate_questions(
    kg,
    n: int = 1000,
    hops: Sequence[int] = (1, 2, 3),
    templates: Templates | str | Path | None = None,
    seed: int = 0,
    max_answers: int = 10,
    relations: Sequence[str] | None = None,
    id_prefix: str = "gen",
    max_tries: int = 200,
    adjacency: Adjacency | None = None,
    semantics: AnswerSemantics | None = None,
) -> list[QAExample]:
    """`n` questions, hop counts taken in turn from `hops`; `relations` limits the (forward) KG
    relations used. Fewer than `n` come back only if the KG has no more distinct (topic, path)
    pairs with 1..max_answers answers (a warning says so). Answers are entity ids; their labels are
    in `answer_labels`. Deterministic for a given KG, templates and seed."""
    if not isinstance(templates, Templates):
        templates = Templates.load(templates) if templates is not None else Templates()
    adj = adjacency if adjacency is not None else build_adjacency(kg)
    if adj.entities is None:
        raise ValueError("question generation needs a graph that can list its triples (NetworkXGraph)")
    allowed = None if relations is None else {base_relation(r) for r in relations}
    rels_by_entity: dict[str, list[str]] = {}
    for r, m in adj.by_relation.items():
        if allowed is None or base_relation(r) in allowed:
            for e in m:
                rels_by_entity.setdefault(e, []).append(r)
    entities = sorted(rels_by_entity)
    if not entities:
        raise ValueError("the graph has no relations to ask about")
    rng = random.Random(seed)
    wording = random.Random(f"wording-{seed}")
    seen: set[tuple[str, tuple[str, ...]]] = set()
    open_hops = [h for h in hops if h >= 1]
    examples: list[QAExample] = []
    slot = 0
    while len(examples) < n and open_hops:
        hop = open_hops[slot % len(open_hops)]
        made = None
        for _ in range(max_tries):
            made = _try_question(adj, rels_by_entity, entities, hop, rng, seen, max_answers, semantics)
            if made:
                break
        if not made:  # this hop count is exhausted on this KG
            open_hops.remove(hop)
            continue
        slot += 1
        topic, path, answers = made
        seen.add((topic, tuple(path)))
        label = kg.label(topic)
        ordered = sorted(answers)
        examples.append(QAExample(
            question=templates.question(path, f"[{label}]", wording),
            topic_entities=[topic],
            answers=ordered,
            relation_path=list(path),
            qid=f"{id_prefix}-{len(examples)}",
            hops=hop,
            source=f"generated:seed={seed}",
            gold_path=list(path), answer_labels=[kg.label(a) for a in ordered],
        ))
    if len(examples) < n:
        print(f"warning: the KG only yielded {len(examples)} of {n} distinct questions "
              f"(hops {list(hops)}, at most {max_answers} answers)", file=sys.stderr)
    return examples


def _try_question(adj, rels_by_entity, entities, hop, rng, seen, max_answers, semantics):
    topic = rng.choice(entities)
    path, here = [], topic
    for _ in range(hop):
        rels = rels_by_entity.get(here)
        if not rels:
            return None
        relation = rng.choice(rels)
        path.append(relation)
        here = rng.choice(adj.by_relation[relation][here])
    if (topic, tuple(path)) in seen:
        return None
    answers = path_answers(adj, topic, path, semantics)
    if not answers or len(answers) > max_answers:
        return None
    return topic, path, answers


def main(argv: Sequence[str] | None = None) -> int:
    from rra.data.qa_files import save_qa_file
    from rra.graph.loaders import load_graph

    ap = argparse.ArgumentParser(prog="python -m rra.data.question_generator", description=__doc__.split("\n\n")[0])
    ap.add_argument("kb", help="KG file: head|relation|tail (.txt), TSV (.tsv) or N-Triples (.nt)")
    ap.add_argument("--out", required=True, help="questions file to write (.jsonl or .tsv)")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--hops", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--labels", help="entity labels (id<TAB>label)")
    ap.add_argument("--templates", help="relation templates (.yaml or .json); generic ones otherwise")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-answers", type=int, default=10)
    ap.add_argument("--relations", nargs="+", help="only use these KG relations")
    ap.add_argument("--topic-never-answer", action="store_true",
                    help="answer rule: the topic entity is never an answer (data.semantics.topic_can_be_answer=false)")
    ap.add_argument("--no-revisit-topic", action="store_true",
                    help="answer rule: no path passes back through the topic (data.semantics.revisit_topic=false)")
    args = ap.parse_args(argv)
    kg = load_graph(args.kb, labels_path=args.labels)
    semantics = AnswerSemantics(not args.topic_never_answer, not args.no_revisit_topic)
    questions = generate_questions(kg, args.n, args.hops, args.templates, args.seed, args.max_answers, args.relations,
                                   semantics=semantics)
    save_qa_file(questions, args.out)
    by_hop = {h: sum(q.hops == h for q in questions) for h in args.hops}
    print(f"wrote {len(questions)} questions to {args.out} (by hop: {by_hop})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
