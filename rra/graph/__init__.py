"""The graph layer: one `KnowledgeGraph` protocol, three backends that answer it identically.

    kg = load_graph("kb.txt")                          # NetworkX, in memory (default)
    kg = load_graph("kb.nt", backend="oxigraph")       # embedded SPARQL store (store_path= for disk)
    kg = SparqlGraph("http://127.0.0.1:7878/query")    # any SPARQL 1.1 endpoint
    kg.follow_path("Alien", ["directed_by", "^directed_by"])

Files: `head|relation|tail` (.txt), TSV (.tsv), N-Triples (.nt); `write_ntriples` (or
`rra-kg convert`) exports a KG for any SPARQL store. Ids map to IRIs through `RdfMapping`
(entity/relation base IRI + percent-encoded id; labels on rdfs:label by default).
Hydra: conf/graph/{networkx,oxigraph,sparql}.yaml.
"""
from rra.graph.base import (INVERSE_PREFIX, GraphError, GraphStats, GraphUnavailableError, KnowledgeGraph,
                            PathInstance, UnknownEntityError, base_relation, inverse, is_inverse, step_triple,
                            walk_path)
from rra.graph.loaders import (CompressedFileError, EmptyKGError, KGFormatError, LoadReport, detect_format, load_graph,
                               read_labels, read_triples)
from rra.graph.networkx_graph import NetworkXGraph
from rra.graph.oxigraph_graph import OxigraphGraph
from rra.graph.rdf import RDFS_LABEL, RdfMapping, iri_ref, literal, ntriples_text, write_ntriples
from rra.graph.sparql_graph import SparqlEndpointError, SparqlGraph, SparqlTruncatedError, SparqlUnavailableError
from rra.records import Triple

__all__ = [
    "INVERSE_PREFIX",
    "GraphError",
    "GraphStats",
    "GraphUnavailableError",
    "CompressedFileError", "EmptyKGError", "KGFormatError",
    "KnowledgeGraph",
    "LoadReport",
    "NetworkXGraph",
    "OxigraphGraph",
    "PathInstance",
    "RDFS_LABEL",
    "RdfMapping",
    "SparqlEndpointError",
    "SparqlGraph",
    "SparqlTruncatedError", "SparqlUnavailableError",
    "Triple",
    "UnknownEntityError",
    "base_relation",
    "detect_format",
    "inverse",
    "iri_ref",
    "is_inverse",
    "literal",
    "load_graph",
    "ntriples_text",
    "read_labels",
    "read_triples",
    "step_triple",
    "walk_path",
    "write_ntriples",
]
