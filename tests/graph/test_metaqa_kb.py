"""The real MetaQA KB (../shared/data; skipped when absent) loads completely."""
from __future__ import annotations

import pytest

from rra.graph import load_graph


@pytest.mark.shared_data
@pytest.mark.slow
def test_metaqa_kb_loads(metaqa_root):
    kg = load_graph(metaqa_root / "kb.txt")
    stats = kg.stats()
    # Figures from shared/data/README.md: 133,582 distinct lines, 43,234 entities, 9 relations.
    assert kg.load_report.lines == kg.load_report.triples == stats.triples == 133_582
    assert stats.entities == 43_234 and len(stats.relations) == 9
    assert stats.relations["starred_actors"] == 33_718
    movies = kg.neighbors("John Krasinski", "^starred_actors")
    assert movies and all("John Krasinski" in kg.neighbors(m, "starred_actors") for m in movies)
