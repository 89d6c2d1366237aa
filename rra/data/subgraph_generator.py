"""A small generator of per-question-subgraph benchmarks in both formats rra reads (RoG and NSM /
GNN-RAG, `rra.data.subgraph_formats`), for tests, CI and the default of conf/data/subgraphs.yaml.

It invents a Freebase-like film world and writes, per split, questions that each carry their
own subgraph: the topic's neighbourhood plus distractor facts up to `triples` per question. What
the real sets have and a reader must survive is there on purpose:
- compound value nodes: an actor's role is `actor -film.actor.film-> m.0c... -film.performance.
  character-> character` (and `-film.performance.film-> film`), the middle node unnamed;
  "what character did [X] play" is answered through it;
- unreachable answers: a share of questions (`unreachable`) whose subgraph lacks every answer;
- names with commas and parentheses ("Paris, Texas (film)", "Martin Luther King, Jr.").

    python -m rra.data.subgraph_generator OUT_DIR [--questions 120] [--triples 60] [--seed 0]

writes OUT_DIR/rog/{train,dev,test}.jsonl (and .parquet with pyarrow) and OUT_DIR/nsm/
{train,dev,test}.jsonl with entities.txt, relations.txt, entities_names.json.
"""
from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass
from pathlib import Path

SPLITS = {"train": 0.7, "dev": 0.15, "test": 0.15}
DIRECTED_BY = "film.film.directed_by"
BORN_IN = "people.person.place_of_birth"
CONTAINED_BY = "location.location.containedby"
ACTED = "film.actor.film"
PERF_FILM = "film.performance.film"
PERF_CHARACTER = "film.performance.character"
GENRE = "film.film.genre"
DISTRACTORS = ["film.film.language", "people.person.profession", "award.award_winner.awards_won",
               "location.location.time_zones", "film.film.country", "people.person.nationality"]

FIRST = ["Ann", "Trey", "Ilse", "Omar", "Kenji", "Lucia", "Pavel", "Mara", "Tomas", "Zadie", "Ruth", "Idris"]
LAST = ["Parker", "Varga", "King, Jr.", "Okafor", "Lee (actor)", "Marsh", "Duval", "Sato", "Quinn", "Brandt"]
TITLES = ["Paris, Texas", "The Glass Orchard", "Night (1962 film)", "Red River", "Salt", "Harbour Lights",
          "Winter, Again", "The Long Walk (film)", "Blue Fern", "Iron Coast", "Quiet Fields", "North by North"]
CITIES = ["Paris, Texas", "Lagos", "Osaka", "Brno", "Lyon (city)", "Tucson", "Porto", "Kraków"]
COUNTRIES = ["United States", "Nigeria", "Japan", "Czech Republic", "France", "Portugal", "Poland"]
CHARACTERS = ["Phillip", "Mr. Hat", "Agent K (voice)", "Dolores, the Baker", "Captain Reyes", "Old Tom"]
GENRES = ["Drama", "Western", "Comedy", "Thriller (genre)"]


@dataclass
class World:
    triples: list[tuple[str, str, str]]  # over entity keys
    names: dict[str, str]  # entity key -> name (CVTs have none)


def make_world(rng: random.Random, films: int = 24, people: int = 30) -> World:
    names: dict[str, str] = {}
    counter = iter(range(10**6))

    def entity(name: str | None) -> str:
        key = f"m.0{next(counter):05d}"
        if name is not None:
            names[key] = name
        return key

    def distinct(pool: list[str], n: int) -> list[str]:
        out = [f"{pool[i % len(pool)]}" + ("" if i < len(pool) else f" {i // len(pool) + 1}") for i in range(n)]
        rng.shuffle(out)
        return out

    countries = [entity(n) for n in COUNTRIES]
    cities = [entity(n) for n in CITIES]
    triples = [(c, CONTAINED_BY, rng.choice(countries)) for c in cities]
    persons = [entity(n) for n in distinct([f"{f} {s}" for f in FIRST for s in LAST], people)]
    films_ = [entity(n) for n in distinct(TITLES, films)]
    characters = [entity(n) for n in distinct(CHARACTERS, films * 2)]
    genres = [entity(n) for n in GENRES]
    triples += [(p, BORN_IN, rng.choice(cities)) for p in persons]
    for i, f in enumerate(films_):
        triples.append((f, DIRECTED_BY, rng.choice(persons)))
        triples.append((f, GENRE, rng.choice(genres)))
        for actor, character in zip(rng.sample(persons, 2), characters[2 * i:2 * i + 2]):
            cvt = entity(None)  # the compound "performance" node: actor, film, character
            triples += [(actor, ACTED, cvt), (cvt, PERF_FILM, f), (cvt, PERF_CHARACTER, character)]
    extra = [entity(n) for n in ("English", "Actor", "Golden Reel (award)", "UTC+1", "Film director")]
    for _ in range(len(triples)):
        triples.append((rng.choice(persons + films_), rng.choice(DISTRACTORS), rng.choice(extra)))
    return World(sorted(set(triples)), names)


def _questions(world: World) -> list[dict]:
    """Every question the world answers: (template, topic, answers, path)."""
    out_edges: dict[str, list[tuple[str, str]]] = {}
    for h, r, t in world.triples:
        out_edges.setdefault(h, []).append((r, t))
    n = world.names

    def objects(e: str, r: str) -> list[str]:
        return sorted(t for rr, t in out_edges.get(e, []) if rr == r)

    qs = []
    for f in (e for e in n if any(r == DIRECTED_BY for r, _ in out_edges.get(e, []))):
        director = objects(f, DIRECTED_BY)
        qs.append({"question": f"who directed {n[f]}", "topic": f, "answers": director, "hops": 1})
        births = sorted({c for d in director for c in objects(d, BORN_IN)})
        qs.append({"question": f"where was the director of {n[f]} born", "topic": f, "answers": births, "hops": 2})
    for p in (e for e in n if objects(e, BORN_IN)):
        qs.append({"question": f"where was {n[p]} born", "topic": p, "answers": objects(p, BORN_IN), "hops": 1})
        roles = sorted({c for cvt in objects(p, ACTED) for c in objects(cvt, PERF_CHARACTER)})
        if roles:  # answered through the compound value node: one hop of the question
            qs.append({"question": f"what character did {n[p]} play", "topic": p, "answers": roles, "hops": 1,
                       "cvt": True})
    return qs


def _neighbourhood(world: World, topic: str, hops: int = 2) -> list[tuple[str, str, str]]:
    """The triples within `hops` of the topic; a CVT is passed through within the same hop."""
    adj: dict[str, list[tuple[str, str, str]]] = {}
    for t in world.triples:
        adj.setdefault(t[0], []).append(t)
        adj.setdefault(t[2], []).append(t)
    seen, frontier, out = {topic}, [topic], set()
    for _ in range(hops):
        nxt = []
        stack = list(frontier)
        while stack:
            e = stack.pop()
            for t in adj.get(e, []):
                out.add(t)
                for x in (t[0], t[2]):
                    if x in seen:
                        continue
                    seen.add(x)
                    (stack if x not in world.names else nxt).append(x)  # an unnamed CVT: same hop
        frontier = nxt
    return sorted(out)


def generate(questions: int = 120, triples: int = 60, unreachable: float = 0.1, seed: int = 0) -> dict:
    """{split: [record]} with each record's topic, answers, hops, cvt flag and subgraph (entity
    keys), plus the world's names: the input of both writers."""
    rng = random.Random(seed)
    world = make_world(rng)
    pool = _questions(world)
    rng.shuffle(pool)
    pool = (pool * (questions // max(1, len(pool)) + 1))[:questions]
    records = []
    for i, q in enumerate(pool):
        sub = set(_neighbourhood(world, q["topic"]))
        cut = rng.random() < unreachable
        if cut:  # the answers are not in this question's graph (the ceiling is below 100%)
            sub = {t for t in sub if t[0] not in q["answers"] and t[2] not in q["answers"]}
        while len(sub) < triples and len(sub) < len(world.triples):
            sub.add(rng.choice(world.triples))
        if cut:
            sub = {t for t in sub if t[0] not in q["answers"] and t[2] not in q["answers"]}
        records.append({**q, "id": f"Q{seed}-{i:05d}", "subgraph": sorted(sub), "unreachable": cut})
    cuts, out, start = list(SPLITS.items()), {}, 0
    for k, (split, share) in enumerate(cuts):
        end = len(records) if k == len(cuts) - 1 else start + round(share * len(records))
        out[split] = records[start:end]
        start = end
    return {"splits": out, "names": world.names}


def big_subgraph_records(n: int, triples: int, seed: int = 0) -> dict:
    """`n` questions whose subgraphs are padded with random facts to `triples` each (the speed
    benchmark: 5,000-triple subgraphs)."""
    rng = random.Random(seed)
    data = generate(questions=n, triples=0, unreachable=0.0, seed=seed)
    names = data["names"]
    records = [r for split in data["splits"].values() for r in split]
    relations = DISTRACTORS + [f"bench.padding.r{i}" for i in range(40)]
    for r in records:
        sub = set(map(tuple, r["subgraph"]))
        while len(sub) < triples:
            h, t = f"m.0pad{rng.randrange(triples)}", f"m.0pad{rng.randrange(triples)}"
            names.setdefault(h, f"Padding entity {h[5:]}")
            names.setdefault(t, f"Padding entity {t[5:]}")
            sub.add((h, rng.choice(relations), t))
        r["subgraph"] = sorted(sub)
    return {"splits": {"test": records}, "names": names}


# -- writers -----------------------------------------------------------------------------------
def rog_rows(records: list[dict], names: dict[str, str]) -> list[dict]:
    def shown(e: str) -> str:
        return names.get(e, e)  # a CVT keeps its m.0... id, as in RoG's files

    return [{"id": r["id"], "question": r["question"], "answer": [shown(a) for a in r["answers"]],
             "q_entity": [shown(r["topic"])], "a_entity": [shown(a) for a in r["answers"]],
             "graph": [[shown(h), rel, shown(t)] for h, rel, t in r["subgraph"]], "choices": []}
            for r in records]


def write_rog(records: list[dict], names: dict[str, str], path: Path) -> Path:
    """RoG rows as JSONL, or parquet when `path` ends in .parquet (needs pyarrow)."""
    rows = rog_rows(records, names)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), path)
    else:
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def write_nsm(splits: dict[str, list[dict]], names: dict[str, str], folder: Path) -> dict[str, Path]:
    """NSM / GNN-RAG files: {split}.jsonl with integer ids into entities.txt / relations.txt, and
    entities_names.json for the named entities."""
    folder.mkdir(parents=True, exist_ok=True)
    records = [r for rs in splits.values() for r in rs]
    entities = sorted({e for r in records for h, _, t in r["subgraph"] for e in (h, t)} |
                      {r["topic"] for r in records} | {a for r in records for a in r["answers"]})
    relations = sorted({rel for r in records for _, rel, _ in r["subgraph"]})
    eid, rid = {e: i for i, e in enumerate(entities)}, {r: i for i, r in enumerate(relations)}
    (folder / "entities.txt").write_text("".join(e + "\n" for e in entities), encoding="utf-8")
    (folder / "relations.txt").write_text("".join(r + "\n" for r in relations), encoding="utf-8")
    (folder / "entities_names.json").write_text(
        json.dumps({e: names[e] for e in entities if e in names}, ensure_ascii=False), encoding="utf-8")
    out = {}
    for split, rs in splits.items():
        lines = []
        for r in rs:
            sub = r["subgraph"]
            lines.append(json.dumps({
                "id": r["id"], "question": r["question"], "entities": [eid[r["topic"]]],
                "answers": [{"kb_id": a, "text": names.get(a, a)} for a in r["answers"]],
                "subgraph": {"entities": sorted({eid[e] for h, _, t in sub for e in (h, t)}),
                             "tuples": [[eid[h], rid[rel], eid[t]] for h, rel, t in sub]}}, ensure_ascii=False))
        out[split] = folder / f"{split}.jsonl"
        out[split].write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return out


def write_all(out: str | Path, questions: int = 120, triples: int = 60, unreachable: float = 0.1,
              seed: int = 0, parquet: bool | None = None) -> dict:
    """Both formats under `out` (rog/, nsm/); parquet too when pyarrow is there (or `parquet`)."""
    out = Path(out)
    data = generate(questions, triples, unreachable, seed)
    if parquet is None:
        try:
            import pyarrow  # noqa: F401

            parquet = True
        except ImportError:
            parquet = False
    files = {"rog": {}, "nsm": write_nsm(data["splits"], data["names"], out / "nsm")}
    for split, records in data["splits"].items():
        files["rog"][split] = write_rog(records, data["names"], out / "rog" / f"{split}.jsonl")
        if parquet:
            files.setdefault("rog_parquet", {})[split] = write_rog(records, data["names"],
                                                                     out / "rog" / f"{split}.parquet")
    return files


def sample_dir(seed: int = 0) -> Path:
    """Where the data config's default sample is written (once per seed): $RRA_CACHE_DIR or ~/.cache/rra."""
    import os

    base = Path(os.environ.get("RRA_CACHE_DIR") or Path.home() / ".cache" / "rra")
    return base / "subgraph_sample" / f"v1-seed{seed}"


def sample_file(split: str, format: str = "rog", seed: int = 0) -> str:
    """The generated sample's file of `split` in `format`, written on first use."""
    folder = sample_dir(seed)
    path = folder / format / f"{split}.jsonl"
    if not path.exists():
        import tempfile

        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=folder.parent))
        write_all(tmp, seed=seed, parquet=False)
        try:
            tmp.rename(folder)  # atomic: a concurrent first use finds the whole sample or none
        except OSError:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
    return str(path)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--questions", type=int, default=120)
    ap.add_argument("--triples", type=int, default=60, help="pad each subgraph to this many triples")
    ap.add_argument("--unreachable", type=float, default=0.1, help="share of questions without their answers")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    files = write_all(args.out, args.questions, args.triples, args.unreachable, args.seed)
    print(json.dumps({k: {s: str(p) for s, p in v.items()} for k, v in files.items()}, indent=1))


if __name__ == "__main__":
    main()
