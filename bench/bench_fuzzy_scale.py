"""Fuzzy entity linking on large KGs: the name index's build and a misspelt question's linking.

    python -m bench.bench_fuzzy_scale [--sizes 100000 1000000] [--questions 100] [--scanned 5]
        [--backends networkx oxigraph virtuoso] [--store-lookups 10]

For each size a seeded synthetic KG (MetaQA-like shape as bench.bench_scale: 18 relations, a head
per 4 facts, Zipf-like tails; every entity named by two invented words, "Lobalel Mimor", so names
are alike and many) is loaded into NetworkX and into an embedded Oxigraph store. Questions name an
entity with one letter of its longest word dropped, doubled or swapped ("who knows Lobalel Mimr in
the winter"); RRA's linker (`TopicLinker`, lookups batched, fuzzy on) links them two ways:

- `scan`: what rra did before: the index read from `all_triples`, `labels` and `all_aliases`, and
  every n-gram scored against every name (`--scanned` questions: a question costs seconds there);
- `filtered`: the index read from the backend's `all_names` (one scan of the naming triples on a
  store) and each n-gram scored only against names that can reach the cut-off (shared trigrams).

On a store (embedded Oxigraph; a private Virtuoso on loopback with `names_in_memory=True`) the
linker's case-insensitive lookups come from every name read once; `store_lookups` links
`--store-lookups` questions with the store's own VALUES join on LCASE (as before), the same index,
in the same run.

Measured: build seconds, linking seconds per question, and the share of questions whose first
anchor carries the gold entity's name (on the scanned questions both ways: the same anchors).
Writes bench/results/bench_fuzzy_scale.json.
"""
from __future__ import annotations

import random
from contextlib import ExitStack
import tempfile
import time
from pathlib import Path

from bench.common import RESULTS, Run, arguments, free_port
from rra.graph import KnowledgeGraph, load_graph
from rra.linking import FuzzyIndex, TopicLinker
from rra.records import QAExample

GRAPH = "http://rra.local/graph/fuzzy"
SYLLABLES = ["ka", "lo", "mi", "ren", "sto", "va", "dor", "el", "an", "ther", "qu", "is", "bal", "mor", "ten"]


class _DefaultNames:
    """A graph whose `all_names` is the protocol's default (every node from `all_triples`, their
    `labels` and `all_aliases`), whatever the backend overrides it with: how the index read it before."""

    def __init__(self, kg):
        self.kg = kg

    def all_names(self) -> dict[str, list[str]]:
        return KnowledgeGraph.all_names(self.kg)


class ScanEveryName(FuzzyIndex):
    """The index as it was (build it on `_DefaultNames(kg)`): every name scored."""

    def _reachable(self, name: str) -> list[str]:
        return self.keys


def generate(n_triples: int, out: Path, seed: int = 0) -> tuple[Path, Path, dict[str, str]]:
    rng = random.Random(seed)
    heads, tails = max(10, n_triples // 4), max(10, n_triples // 3)

    def name() -> str:
        return " ".join("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()
                        for _ in range(2))

    kb, lab = out / "kb.tsv", out / "labels.tsv"
    with kb.open("w") as f:
        for _ in range(n_triples):
            f.write(f"m{rng.randrange(heads)}\trel_{rng.randrange(18):02d}\te{int(tails ** rng.random()) - 1}\n")
    labels = {f"m{i}": name() for i in range(heads)} | {f"e{i}": name() for i in range(tails)}
    with lab.open("w") as f:
        f.writelines(f"{e}\t{n}\n" for e, n in labels.items())
    return kb, lab, labels


def typo(name: str, rng: random.Random) -> str:
    words = name.split()
    i = max(range(len(words)), key=lambda k: len(words[k]))
    w, j = words[i], rng.randrange(1, len(words[i]) - 1)
    words[i] = rng.choice([w[:j] + w[j + 1:], w[:j] + w[j] + w[j:], w[:j] + w[j + 1] + w[j] + w[j + 2:]])
    return " ".join(words)


def link(kg, index: FuzzyIndex, questions: list[QAExample], labels: dict[str, str]) -> dict:
    linker = TopicLinker(kg, use_gold_topic=False)
    linker._fuzzy_index = index
    t = time.perf_counter()
    index.match("warm the index up")  # the build, timed apart from the questions
    build = time.perf_counter() - t
    t = time.perf_counter()
    links = linker.link_batch(questions)
    took = time.perf_counter() - t
    first = [link.entities[0] if link.entities else None for link in links]
    right = sum(e is not None and labels.get(e) == labels[q.topic_entities[0]] for e, q in zip(first, questions))
    return {"build_s": round(build, 2), "link_s_per_question": round(took / len(questions), 4),
            "first_anchor_named_as_gold": round(100 * right / len(questions), 1), "n": len(questions),
            "names": len(index.keys), "first_anchors": first}


def open_graph(backend: str, kb: Path, lab: Path, tmp: Path, stack: ExitStack):
    """The KG on `backend`; a Virtuoso server (loaded from the N-Triples that load_graph's reader
    gives) is stopped when `stack` closes."""
    if backend != "virtuoso":
        return load_graph(kb, labels_path=lab, backend=backend,
                          **({"store_path": str(tmp / "store")} if backend == "oxigraph" else {}))
    from rra.graph import SparqlGraph, write_ntriples
    from rra.graph.loaders import read_kg
    from rra.graph.virtuoso import VirtuosoServer

    root = tmp / "virtuoso"
    root.mkdir()
    triples, labels, _ = read_kg(kb, labels_path=lab)
    write_ntriples(root / "kg.nt", triples, labels)
    server = stack.enter_context(VirtuosoServer(root, free_port(), free_port()))
    server.load(root / "kg.nt", GRAPH)
    return SparqlGraph(server.endpoint, trust_env=False, timeout=600, cache_size=0, graph_iri=GRAPH,
                       names_in_memory=True)


def parser():
    """The command line of `python -m bench.bench_fuzzy_scale`."""
    ap = arguments("bench_fuzzy_scale", __doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--backends", nargs="+", default=["networkx", "oxigraph"],
                    help="networkx, oxigraph, virtuoso (a private instance on loopback: Debian's virtuoso-opensource)")
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--scanned", type=int, default=5, help="questions linked by scanning every name")
    ap.add_argument("--store-lookups", type=int, default=10,
                    help="questions linked with the store's own case-insensitive lookups (stores only)")
    ap.add_argument("--out", default=str(RESULTS / "bench_fuzzy_scale.json"))
    return ap


def main() -> None:
    args = parser().parse_args()
    run = Run.start("bench_fuzzy_scale", args)
    figures: dict = {}
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            kb, lab, labels = generate(size, Path(tmp))
            rng = random.Random(1)
            named = sorted(e for e in labels if e.startswith("m"))
            questions = [QAExample(f"who knows {typo(labels[e], rng)} in the winter", [e], [], qid=f"q{i}")
                         for i, e in enumerate(rng.sample(named, args.questions))]
            for backend in args.backends:
                with ExitStack() as stack:
                    t = time.perf_counter()
                    kg = open_graph(backend, kb, lab, Path(tmp), stack)
                    load = time.perf_counter() - t
                    index = FuzzyIndex(kg)
                    new = link(kg, index, questions, labels)
                    old = link(kg, ScanEveryName(_DefaultNames(kg)), questions[:args.scanned], labels)
                    row = {"triples": size, "load_s": round(load, 1), "filtered": new, "scan": old,
                           "same_first_anchors_on_the_scanned_questions":
                               new["first_anchors"][:args.scanned] == old["first_anchors"],
                           "build_speedup": round(old["build_s"] / new["build_s"], 1),
                           "link_speedup": round(old["link_s_per_question"] / new["link_s_per_question"], 1)}
                    if backend != "networkx" and args.store_lookups:
                        # the same few questions in one batch both ways (a batch's lookups are one query)
                        few = link(kg, index, questions[:args.store_lookups], labels)
                        kg.names_in_memory = False  # the store's LCASE join per batch, as before
                        store = link(kg, index, questions[:args.store_lookups], labels)
                        row["store_lookups"] = {"in_memory": few, "in_the_store": store,
                                                "same_first_anchors": few["first_anchors"] == store["first_anchors"],
                                                "ratio": round(store["link_s_per_question"] / few["link_s_per_question"], 1)}
                    for r in (new, old, *(row.get("store_lookups", {}).get(k, {}) for k in ("in_memory", "in_the_store"))):
                        r.pop("first_anchors", None)
                    figures[f"{backend}_{size}"] = row
                    print(backend, size, row, flush=True)
                    del kg
    run.write({"figures": figures}, args.out)


if __name__ == "__main__":
    main()
