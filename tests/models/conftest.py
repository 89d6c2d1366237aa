import pytest

from rra.models.encoder import TINY_CONFIG


@pytest.fixture
def tiny_kwargs():
    """Retriever arguments for a tiny random encoder that learns fast."""
    return dict(encoder_config=dict(TINY_CONFIG), pretrained=False, lr=3e-3, head_lr=1e-2, dropout=0.0,
                warmup_ratio=0.0)
