from rra.graph.base import (
    INVERSE_PREFIX,
    GraphStats,
    KnowledgeGraph,
    PathInstance,
    Triple,
    UnknownEntityError,
    base_relation,
    inverse,
    is_inverse,
    step_triple,
    walk_path,
)
from rra.graph.loaders import (
    KGFormatError,
    LoadReport,
    detect_format,
    load_graph,
    read_labels,
    read_triples,
    write_ntriples,
)
from rra.graph.networkx_graph import NetworkXGraph
from rra.graph.oxigraph_graph import OxigraphGraph
from rra.graph.rdf import RDFS_LABEL, RdfMapping, iri_ref, literal
from rra.graph.sparql_graph import SparqlEndpointError, SparqlGraph

__all__ = [
    "INVERSE_PREFIX",
    "GraphStats",
    "KGFormatError",
    "KnowledgeGraph",
    "LoadReport",
    "NetworkXGraph",
    "OxigraphGraph",
    "PathInstance",
    "RDFS_LABEL",
    "RdfMapping",
    "SparqlEndpointError",
    "SparqlGraph",
    "Triple",
    "UnknownEntityError",
    "base_relation",
    "detect_format",
    "inverse",
    "iri_ref",
    "is_inverse",
    "literal",
    "load_graph",
    "read_labels",
    "read_triples",
    "step_triple",
    "walk_path",
    "write_ntriples",
]
