"""Small, realistic rows of the per-question Freebase benchmarks (WebQSP / CWQ as RoG and NSM ship
them), written by hand for the tests and bench/bench_bad_input.py: Freebase machine ids (m.0abc), compound value nodes (CVTs:
an actor's performance, a sibling relationship), `type.object.type` and `common.topic.notable_types`
edges, both directions of a property pair where Freebase stores both, leaves around the answer.
The real files are not in the repository (they cannot be downloaded where it is built).

NSM_ROW has 17 triples; without a names file only its two CVTs behave like compound values.
"""
import json
from pathlib import Path

# -- NSM / GraftNet: ids only, names in entities_names.json (when the user has it) ---------------
PORTMAN, PADME, PERF, PHANTOM, LUCAS = "m.09l3p", "m.0f2y0", "m.0k3qy8", "m.0ddt_", "m.0hvn4"
JERUSALEM, USA, WASHINGTON, FEMALE, TATOOINE = "m.07qzv", "m.09c7w0", "m.0rh6k", "m.02zsn", "m.07mgr"
SIBLING_CVT, AVIV = "m.0gxnnwc", "m.0bw7h3"
NAMES = {PORTMAN: "Natalie Portman", PADME: "Padmé Amidala", PHANTOM: "Star Wars Episode I: The Phantom Menace",
         LUCAS: "George Lucas", JERUSALEM: "Jerusalem", USA: "United States of America",
         WASHINGTON: "Washington, D.C.", FEMALE: "Female", TATOOINE: "Tatooine", AVIV: "Aviv Portman"}

NSM_TRIPLES = [
    [PORTMAN, "film.actor.film", PERF],                      # into the performance CVT
    [PERF, "film.performance.actor", PORTMAN],               # ... and back (Freebase stores both)
    [PERF, "film.performance.character", PADME],
    [PERF, "film.performance.film", PHANTOM],
    [PHANTOM, "film.film.starring", PERF],
    [PHANTOM, "film.film.directed_by", LUCAS],
    [LUCAS, "type.object.type", "people.person"],
    [PADME, "fictional_universe.fictional_character.character_created_by", LUCAS],
    [PADME, "fictional_universe.fictional_character.gender", FEMALE],
    [PADME, "fictional_universe.fictional_character.places_lived", TATOOINE],
    [PADME, "type.object.type", "fictional_universe.fictional_character"],
    [PORTMAN, "people.person.place_of_birth", JERUSALEM],
    [PORTMAN, "people.person.nationality", USA],
    [USA, "location.country.capital", WASHINGTON],
    [PORTMAN, "people.person.sibling_s", SIBLING_CVT],       # a second CVT: a sibling relationship
    [SIBLING_CVT, "people.sibling_relationship.sibling", AVIV],
    [SIBLING_CVT, "people.sibling_relationship.sibling", PORTMAN],
]
NSM_ROW = {"id": "WebQTest-1", "question": "what character did natalie portman play in star wars",
           "entities": [PORTMAN], "answers": [{"kb_id": PADME, "text": "Padmé Amidala"}],
           "subgraph": {"entities": sorted({e for t in NSM_TRIPLES for e in (t[0], t[2])}), "tuples": NSM_TRIPLES}}

# -- RoG: entities by name; unnamed CVTs as their ids ----------------------------------------------
ROG_ROWS = [
    {"id": "WebQTrn-0", "question": "what is the name of justin bieber brother", "answer": ["Jaxon Bieber"],
     "q_entity": ["Justin Bieber"], "a_entity": ["Jaxon Bieber"],
     "graph": [["Justin Bieber", "people.person.sibling_s", "m.0gxnnwc"],
               ["m.0gxnnwc", "people.sibling_relationship.sibling", "Jaxon Bieber"],
               ["m.0gxnnwc", "people.sibling_relationship.sibling", "Justin Bieber"],
               ["Justin Bieber", "people.person.parents", "Jeremy Bieber"],
               ["Jeremy Bieber", "people.person.children", "Jaxon Bieber"],
               ["Justin Bieber", "people.person.place_of_birth", "London, Ontario"],
               ["Justin Bieber", "common.topic.notable_types", "Musical Artist"],
               ["Jaxon Bieber", "people.person.gender", "Male"]],
     "choices": []},
    {"id": "WebQTrn-1", "question": "what character did natalie portman play in star wars",
     "answer": ["Padmé Amidala"], "q_entity": ["Natalie Portman"], "a_entity": ["Padmé Amidala"],
     "graph": [["Natalie Portman", "film.actor.film", "m.0k3qy8"],
               ["m.0k3qy8", "film.performance.character", "Padmé Amidala"],
               ["m.0k3qy8", "film.performance.film", "Star Wars Episode I: The Phantom Menace"],
               ["Natalie Portman", "people.person.place_of_birth", "Jerusalem"],
               ["Padmé Amidala", "fictional_universe.fictional_character.gender", "Female"],
               ["Star Wars Episode I: The Phantom Menace", "film.film.directed_by", "George Lucas"]],
     "choices": []},
    {"id": "WebQTrn-2", "question": "where was george lucas born", "answer": ["Modesto"],
     "q_entity": ["George Lucas"], "a_entity": ["Modesto"],
     "graph": [["George Lucas", "people.person.place_of_birth", "Modesto"],
               ["Modesto", "location.location.containedby", "California"],
               ["George Lucas", "film.director.film", "Star Wars Episode I: The Phantom Menace"],
               ["George Lucas", "people.person.nationality", "United States of America"]],
     "choices": []},
]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def nsm_folder(root: Path, rows: list[dict] | None = None, names: bool = False) -> Path:
    """An NSM test file in `root` (ids as strings, no entities.txt needed), with or without
    entities_names.json beside it."""
    root.mkdir(parents=True, exist_ok=True)
    path = write_jsonl(root / "test.jsonl", rows or [NSM_ROW])
    if names:
        (root / "entities_names.json").write_text(json.dumps(NAMES), encoding="utf-8")
    return path
