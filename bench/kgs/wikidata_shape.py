"""A generated KG and its question files rewritten in Wikidata's shape: the same facts and
questions, with Wikidata's identifiers and naming conventions, so a bench can ask whether rra reads
a Wikidata extract as well as the KG it came from.

- every entity and class becomes `wd:Q<n>`, every predicate `wdt:P<n>` (`rdf:type` is `wdt:P31`),
  numbered in order of first use;
- a predicate carries no label of its own: its name is the `rdfs:label` of the property entity
  `wd:P<n>`, linked by `wikibase:directClaim` as in Wikidata's RDF dumps;
- labels are language-tagged (`"place of birth"@en`); other literals stay as they were, unless
  `--datetimes`: then every date is an `xsd:dateTime` at midnight UTC, as Wikidata writes a time
  value of any precision ("2021-11-10"^^xsd:date -> "2021-11-10T00:00:00Z", a year "2023"^^xsd:gYear
  -> "2023-01-01T00:00:00Z"); the question files' answers stay as written ("2023", "2021-11-10");
- `--aliases`: people, institutions, venues and funders get a `skos:altLabel` as Wikidata's aliases
  are ("Liam Bergström" -> "L. Bergström", "University of Bengaluru" -> "UB", a conference's
  "(ICTM)" -> "ICTM"), and every other test question (by a hash of its qid) whose text holds its
  topic's label says the alias instead: what linking from the text must find.

Question files (`*.jsonl`) get the same identifiers: topics, answers, gold paths and plans.

    python -m bench.kgs.wikidata_shape SRC_DIR OUT_DIR [--datetimes] [--aliases]   # SRC_DIR: bench.kgs.scholarly --out
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
from pathlib import Path

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
DIRECT_CLAIM = "http://wikiba.se/ontology#directClaim"
ALT_LABEL = "http://www.w3.org/2004/02/skos/core#altLabel"
ACRONYM_CLASSES = ("Institution", "Funder", "Society", "Publisher", "Journal")  # named by their initials
INSTANCE_OF = 31
IRI = re.compile(r"<([^<>\s]+)>")
XSD = "http://www.w3.org/2001/XMLSchema#"
DATED = re.compile(r'^"(-?\d{4})(-\d{2}-\d{2})?"\^\^<' + re.escape(XSD) + r'(gYear|date)>$')
TERM = re.compile(r'(<[^<>\s]+>|"(?:[^"\\]|\\.)*"(?:\^\^<[^<>\s]+>|@[A-Za-z-]+)?)')


class Renamer:
    """Old IRI -> Wikidata IRI, numbered in order of first use (deterministic for one input)."""

    def __init__(self, namespaces: tuple[str, ...]):
        self.namespaces = namespaces
        self.properties: dict[str, int] = {RDF_TYPE: INSTANCE_OF}
        self.items: dict[str, int] = {}

    def owned(self, iri: str) -> bool:
        return iri == RDF_TYPE or iri.startswith(self.namespaces)

    def predicate(self, iri: str) -> str:
        return WDT + f"P{self.properties.setdefault(iri, 1000 + len(self.properties))}"

    def node(self, iri: str) -> str:
        if iri in self.properties:  # a property's own description (its label) sits on wd:P<n>
            return WD + f"P{self.properties[iri]}"
        return WD + f"Q{self.items.setdefault(iri, 100000 + len(self.items))}"


def as_datetime(term: str) -> str:
    """A gYear or date literal as Wikidata's truthy statements write it (any other term unchanged):
    a dateTime at midnight UTC; a year is its first of January (Wikidata's year precision)."""
    m = DATED.match(term)
    if m is None:
        return term
    day = m.group(2) or "-01-01"
    return f'"{m.group(1)}{day}T00:00:00Z"^^<{XSD}dateTime>'


def alias_of(label: str, kind: str) -> str | None:
    """Another name for an entity of class `kind` (its class IRI's last part), as people write it."""
    words = label.split()
    if kind == "Person" and len(words) == 2 and all(w[:1].isupper() for w in words):
        return f"{words[0][0]}. {words[1]}"
    acronym = re.search(r"\(([A-Z][A-Za-z0-9]{1,9})\)\s*$", label)
    if acronym:
        return acronym.group(1)
    if kind in ACRONYM_CLASSES:
        initials = "".join(w[0] for w in re.findall(r"[A-Za-z]+", label) if w[0].isupper())
        return initials if len(initials) >= 2 else None
    return None


def convert_kg(src: Path, out: Path, renamer: Renamer, datetimes: bool = False,
               aliases: dict[str, tuple[str, str]] | None = None) -> dict:
    """The KG file: predicates first (so a property described before its first use is known), then
    every line rewritten; property entities labelled and linked to their predicates."""
    lines = src.read_text(encoding="utf-8").splitlines()
    parsed = [TERM.findall(line) for line in lines if line.strip() and not line.startswith("#")]
    for terms in parsed:
        predicate = terms[1][1:-1]
        if predicate != LABEL and renamer.owned(predicate):
            renamer.predicate(predicate)
    written, labelled = [], set()
    kinds = {s[1:-1]: o[1:-1].rsplit("/", 1)[-1] for s, p, o in parsed if p[1:-1] == RDF_TYPE and o.startswith("<")}
    for s, p, o in parsed:
        s_iri, p_iri = s[1:-1], p[1:-1]
        subject = f"<{renamer.node(s_iri)}>" if renamer.owned(s_iri) else s
        if p_iri == LABEL:
            if o.endswith('"'):  # a plain label: Wikidata's are tagged
                o += "@en"
            written.append(f"{subject} {p} {o} .")
            labelled.add(subject)
            alias = alias_of(o[1:o.rindex('"')], kinds.get(s_iri, "")) if aliases is not None else None
            if alias:
                written.append(f'{subject} <{ALT_LABEL}> "{alias}"@en .')
                aliases[subject[1:-1]] = (o[1:o.rindex('"')], alias)
            continue
        predicate = f"<{renamer.predicate(p_iri)}>" if renamer.owned(p_iri) else p
        obj = f"<{renamer.node(o[1:-1])}>" if o.startswith("<") and renamer.owned(o[1:-1]) else o
        if datetimes:
            obj = as_datetime(obj)
        written.append(f"{subject} {predicate} {obj} .")
    if f"<{WD}P{INSTANCE_OF}>" not in labelled:
        written.append(f'<{WD}P{INSTANCE_OF}> <{LABEL}> "instance of"@en .')
    for number in sorted(renamer.properties.values()):
        written.append(f"<{WD}P{number}> <{DIRECT_CLAIM}> <{WDT}P{number}> .")
    out.write_text("\n".join(written) + "\n", encoding="utf-8")
    return {"lines": len(written), "properties": len(renamer.properties), "items": len(renamer.items)}


def convert_questions(src: Path, out: Path, renamer: Renamer) -> None:
    """Every IRI of the generated KG in a question file, wherever it stands (topics, answers, paths
    as `^iri`, plans), renamed; an IRI used as a relation is a predicate, any other a node."""
    def rename(m: re.Match) -> str:
        iri = m.group(0)
        if iri in renamer.properties:
            return renamer.predicate(iri)
        return renamer.node(iri) if renamer.owned(iri) else iri

    pattern = re.compile("(?:" + "|".join(re.escape(ns) for ns in renamer.namespaces) + r')[^"\s\\]+')
    out.write_text(pattern.sub(rename, src.read_text(encoding="utf-8")), encoding="utf-8")


def alias_questions(path: Path, aliases: dict[str, tuple[str, str]]) -> int:
    """Every other question (by a hash of its qid) whose text holds its topic's label names the
    topic by its alias instead; returns how many were rewritten."""
    rows, changed = [], 0
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        topics = row.get("topic_entities") or []
        label, alias = aliases.get(topics[0], (None, None)) if topics else (None, None)
        odd = int(hashlib.sha256(str(row.get("qid")).encode()).hexdigest(), 16) % 2
        if label and odd and label in row["question"]:
            row["question"] = row["question"].replace(label, alias)
            row.setdefault("extra", {})["alias"] = alias
            changed += 1
        rows.append(json.dumps(row, ensure_ascii=False))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return changed


def convert(src_dir: str | Path, out_dir: str | Path, kg_name: str = "kg.nt",
            namespaces: tuple[str, ...] = ("http://example.org/schol/",), datetimes: bool = False,
            aliases: bool = False) -> dict[str, Path]:
    """Rewrite `src_dir` (a KG file and its question files) into `out_dir`; returns {file stem: path}."""
    src_dir, out_dir = Path(src_dir), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    renamer = Renamer(namespaces)
    paths = {"kg": out_dir / kg_name}
    names: dict[str, tuple[str, str]] | None = {} if aliases else None
    stats = convert_kg(src_dir / kg_name, paths["kg"], renamer, datetimes, names)
    for src in sorted(src_dir.glob("*.jsonl")):
        convert_questions(src, out_dir / src.name, renamer)
        paths[src.stem] = out_dir / src.name
        if names and "test" in src.stem:
            stats[f"{src.stem}_aliased"] = alias_questions(out_dir / src.name, names)
    if names is not None:
        stats["aliases"] = len(names)
    if (src_dir / "stats.json").is_file():
        shutil.copy(src_dir / "stats.json", out_dir / "stats.json")
        paths["stats"] = out_dir / "stats.json"
    (out_dir / "wikidata_shape.txt").write_text(f"{stats}\n", encoding="utf-8")
    return paths


def parser() -> argparse.ArgumentParser:
    """The command line of `python -m bench.kgs.wikidata_shape`."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("src", help="a folder with kg.nt and its question files (bench.kgs.scholarly --out)")
    p.add_argument("out", help="the folder to write the Wikidata-shaped copy into")
    p.add_argument("--datetimes", action="store_true",
                   help="dates and years as xsd:dateTime at midnight UTC, as Wikidata writes them")
    p.add_argument("--aliases", action="store_true",
                   help="skos:altLabel aliases, and every other test question naming its topic by one")
    return p


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    print(convert(args.src, args.out, datetimes=args.datetimes, aliases=args.aliases))


if __name__ == "__main__":
    main()
