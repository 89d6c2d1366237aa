"""`rra-kg`: inspect, convert and bulk-load a KG file.

    rra-kg stats KB [--format pipe|tsv|csv|nt|turtle|nquads|trig|rdfxml] [--on-error skip] [--json]
    rra-kg convert KB out.nt [--labels labels.tsv]       # N-Triples for any SPARQL store
    rra-kg load KB --store DIR                            # an on-disk Oxigraph store
    rra-kg load KB --virtuoso 127.0.0.1:1111 --graph IRI  # a named graph of a running Virtuoso

`load` reads the file through rra's loader (line-numbered errors, --on-error skip); for a dump of
many millions of triples, `rra-kg convert` once and then `oxigraph load --location DIR --file
kb.nt` is the faster route (same IRIs either way).
"""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict

from rra.cli import run_command
from rra.graph.base import GraphError
from rra.graph.loaders import FORMATS, KGFormatError, load_graph, read_kg
from rra.graph.rdf import DEFAULT_ENTITY_BASE, DEFAULT_RELATION_BASE, RDFS_LABEL, RdfMapping, write_ntriples


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rra-kg", description="Inspect, convert and load knowledge graph files.")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("kb", help="KG file: head|relation|tail (.txt), TSV (.tsv), N-Triples (.nt), Turtle (.ttl), "
                                   "N-Quads, TriG or RDF/XML; compressed too (.nt.gz, .ttl.bz2, .xz)")
    common.add_argument("--format", choices=FORMATS, help="override the format guessed from the extension")
    common.add_argument("--labels", help="label file: id<TAB>label lines, or .nt with label triples")
    common.add_argument("--on-error", choices=["raise", "skip"], default="raise",
                        help="malformed lines: stop with an error (default) or skip and count them")
    common.add_argument("--entity-base", default=DEFAULT_ENTITY_BASE)
    common.add_argument("--relation-base", default=DEFAULT_RELATION_BASE)
    common.add_argument("--label-predicate", default=RDFS_LABEL)
    sub = p.add_subparsers(dest="command", required=True)
    stats = sub.add_parser("stats", parents=[common], help="entities, triples and relations of a KG file")
    stats.add_argument("--json", action="store_true", help="print JSON instead of text")
    convert = sub.add_parser("convert", parents=[common], help="write N-Triples for a SPARQL store")
    convert.add_argument("out", help="output .nt file")
    load = sub.add_parser("load", parents=[common], help="load into an Oxigraph store or a Virtuoso graph")
    where = load.add_mutually_exclusive_group(required=True)
    where.add_argument("--store", help="Oxigraph store directory (created if absent)")
    where.add_argument("--virtuoso", metavar="HOST:PORT", help="SQL (isql) port of a running Virtuoso")
    load.add_argument("--graph", help="named graph IRI to load into (needed with --virtuoso)")
    load.add_argument("--user", default="dba")
    load.add_argument("--password", default="dba")
    load.add_argument("--load-dir", help="--virtuoso: directory for the N-Triples file, one the server "
                      "may read (DirsAllowed); default: the KG file's directory")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    mapping = RdfMapping(args.entity_base, args.relation_base, args.label_predicate)
    return run_command("rra-kg", lambda: _run(args, mapping), (KGFormatError, FileNotFoundError, ValueError, GraphError))


def _run(args, mapping: RdfMapping) -> int:
    start = time.perf_counter()
    if args.command == "stats":
        kg = load_graph(args.kb, "networkx", args.format, args.labels, args.on_error, None,
                        mapping.entity_base, mapping.relation_base, mapping.label_predicate)
        stats = kg.stats()
        if args.json:
            print(json.dumps({"stats": asdict(stats), "load": asdict(kg.load_report)}, indent=2))
        else:
            print(kg.load_report)
            print(f"entities: {stats.entities}\ntriples: {stats.triples}\nrelations: {len(stats.relations)}")
            for rel, n in stats.relations.items():
                print(f"  {rel}\t{n}")
        return 0
    if args.command == "convert":
        other: dict[str, list[str]] = {}  # names besides the label: other languages, other naming predicates
        triples, labels, report = read_kg(args.kb, args.format, args.on_error, mapping, args.labels, other)
        lines = write_ntriples(args.out, triples, labels, mapping, other_names=other)
        print(report)
        print(f"wrote {lines} N-Triples lines to {args.out} in {time.perf_counter() - start:.1f} s")
        return 0
    if args.virtuoso:
        return _load_virtuoso(args, mapping, start)
    kg = load_graph(args.kb, "oxigraph", args.format, args.labels, args.on_error, args.store,
                    mapping.entity_base, mapping.relation_base, mapping.label_predicate)
    kg.flush()
    print(kg.load_report)
    print(f"loaded {kg.triple_count()} RDF triples into {args.store} in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


def _load_virtuoso(args, mapping: RdfMapping, start: float) -> int:
    """KG file -> N-Triples in a directory the server may read -> Virtuoso's bulk loader."""
    from pathlib import Path

    from rra.graph.virtuoso import bulk_load

    if not args.graph:
        raise ValueError("--virtuoso needs --graph IRI (the named graph to load into; query it with graph.graph_iri)")
    other: dict[str, list[str]] = {}  # names besides the label, found by as load_graph's graphs find them
    triples, labels, report = read_kg(args.kb, args.format, args.on_error, mapping, args.labels, other)
    out_dir = Path(args.load_dir or Path(args.kb).resolve().parent)
    nt = out_dir / f"{Path(args.kb).stem}.rra.nt"
    write_ntriples(nt, triples, labels, mapping, other_names=other)
    n = bulk_load(nt, args.graph, args.virtuoso, args.user, args.password)
    print(report)
    print(f"loaded {nt} into <{args.graph}> of Virtuoso {args.virtuoso}: the graph holds {n} RDF triples "
          f"({time.perf_counter() - start:.1f} s)")
    return 0
