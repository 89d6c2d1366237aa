"""A sports KG whose questions repeat few templates: the data that a budget counted in epochs of the
de-duplicated questions under-trains (issue 28, item 7).

    python -m bench.template_kg OUT_DIR [--train 5000] [--test 500] [--seed 0]

writes OUT_DIR/kb.tsv (head<TAB>relation<TAB>tail), OUT_DIR/train.jsonl and OUT_DIR/test.jsonl in the
`data=files` format. 24 distinct masked questions (11 relation paths, 1 and 2 hops, 1-3 wordings
each), drawn with skewed frequencies as real question logs are: the most frequent template is ~11%
of the questions, so 5,000 training questions de-duplicate to 24 items, one batch: an epoch is one
optimizer step. Entity ids are their names (no labels file needed); seeded, so runs compare.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

from bench.common import arguments

POSITIONS = ["goalkeeper", "defender", "midfielder", "forward"]
SYLLABLES = ["ka", "lo", "mi", "ra", "ten", "vo", "sul", "dar", "en", "ri", "bo", "ne", "tas", "qui", "mor"]

# (relation path, topic kind, weight, wordings); [E] is where the topic's name goes
TEMPLATES = [
    (["position"], "player", 11, ["what position does [E] play?", "which position does [E] play in?",
                                  "[E] plays in what position?"]),
    (["plays_for"], "player", 9, ["which club does [E] play for?", "what team is [E] on?",
                                  "[E] plays for which club?"]),
    (["nationality"], "player", 8, ["which country is [E] from?", "what is the nationality of [E]?",
                                    "[E] is a citizen of which country?"]),
    (["born_in"], "player", 4, ["where was [E] born?", "in which city was [E] born?"]),
    (["club_country"], "club", 3, ["which country is the club [E] based in?", "where is [E] located?"]),
    (["coached_by"], "club", 3, ["who coaches [E]?", "who is the manager of [E]?"]),
    (["home_stadium"], "club", 2, ["what is the home ground of [E]?", "which stadium does [E] play at?"]),
    (["^plays_for"], "club", 3, ["who plays for [E]?", "name a player of [E]"]),
    (["plays_for", "club_country"], "player", 3, ["in which country does [E] play club football?",
                                                  "which country's league does [E] play in?"]),
    (["plays_for", "coached_by"], "player", 2, ["who is the coach of [E]'s club?",
                                                "who manages the team of [E]?"]),
    (["plays_for", "home_stadium"], "player", 1, ["where does [E] play home games?"]),
]


def names(rng: random.Random, n: int, parts: int, taken: set[str]) -> list[str]:
    out = []
    while len(out) < n:
        name = " ".join("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()
                        for _ in range(parts))
        if name not in taken:
            taken.add(name)
            out.append(name)
    return out


def build_kg(rng: random.Random, players: int = 600, clubs: int = 30, countries: int = 12) -> list[tuple]:
    taken: set[str] = set(POSITIONS)
    country = names(rng, countries, 1, taken)
    city = names(rng, countries * 3, 1, taken)
    club = [f"{n} FC" for n in names(rng, clubs, 1, taken)]
    coach = names(rng, clubs, 2, taken)
    stadium = [f"{n} Arena" for n in names(rng, clubs, 1, taken)]
    player = names(rng, players, 2, taken)
    triples = []
    for i, c in enumerate(club):
        triples += [(c, "club_country", country[i % countries]), (c, "coached_by", coach[i]),
                    (c, "home_stadium", stadium[i])]
    for i, c in enumerate(city):
        triples.append((c, "city_in", country[i % countries]))
    for p in player:
        triples += [(p, "plays_for", rng.choice(club)), (p, "position", rng.choice(POSITIONS)),
                    (p, "nationality", rng.choice(country)), (p, "born_in", rng.choice(city))]
    return triples


def answers(index: dict, topic: str, path: list[str]) -> set[str]:
    frontier = {topic}
    for rel in path:
        frontier = {t for e in frontier for t in index.get((e, rel), ())}
    return frontier


def questions(rng: random.Random, triples: list[tuple], n: int, prefix: str) -> list[dict]:
    index: dict[tuple, set] = {}
    kinds = {"player": sorted({h for h, r, _ in triples if r == "position"}),
             "club": sorted({h for h, r, _ in triples if r == "coached_by"})}
    for h, r, t in triples:
        index.setdefault((h, r), set()).add(t)
        index.setdefault((t, "^" + r), set()).add(h)
    weights = [w for _, _, w, _ in TEMPLATES]
    out = []
    while len(out) < n:
        path, kind, _, wordings = rng.choices(TEMPLATES, weights)[0]
        topic = rng.choice(kinds[kind])
        gold = answers(index, topic, path)
        if not gold:
            continue
        out.append({"qid": f"{prefix}{len(out)}", "question": rng.choice(wordings).replace("[E]", f"[{topic}]"),
                    "topic_entities": [topic], "answers": sorted(gold), "hops": len(path)})
    return out


def write(out_dir: str | Path, train: int = 5000, test: int = 500, seed: int = 0) -> dict:
    rng = random.Random(seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    triples = build_kg(rng)
    (out / "kb.tsv").write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in triples), encoding="utf-8")
    for split, n in (("train", train), ("test", test)):
        rows = questions(rng, triples, n, split[:2])
        (out / f"{split}.jsonl").write_text("".join(json.dumps(q) + "\n" for q in rows), encoding="utf-8")
    return {"triples": len(triples), "train": train, "test": test,
            "templates": sum(len(w) for *_, w in TEMPLATES), "seed": seed}


def parser():
    """The command line of `python -m bench.template_kg`."""
    ap = arguments("template_kg", __doc__)
    ap.add_argument("out_dir")
    ap.add_argument("--train", type=int, default=5000)
    ap.add_argument("--test", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    return ap


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    print(json.dumps(write(args.out_dir, args.train, args.test, args.seed)))


if __name__ == "__main__":
    main()
