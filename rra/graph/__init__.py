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
from rra.graph.networkx_graph import NetworkXGraph

__all__ = [
    "INVERSE_PREFIX",
    "GraphStats",
    "KnowledgeGraph",
    "NetworkXGraph",
    "PathInstance",
    "Triple",
    "UnknownEntityError",
    "base_relation",
    "inverse",
    "is_inverse",
    "step_triple",
    "walk_path",
]
