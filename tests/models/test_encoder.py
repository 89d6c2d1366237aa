import random

import torch

from rra.models.encoder import MIN_GROUP, length_groups, tiny_encoder


def padded(lengths, groups):
    return sum(len(g) * max(lengths[i] for i in g) for g in groups)


def test_length_groups_cover_every_text_once_in_like_lengths():
    rng = random.Random(0)
    lengths = [rng.choice([5, 6, 12, 13, 30, 31]) for _ in range(100)]
    groups = length_groups(lengths)
    assert sorted(i for g in groups for i in g) == list(range(100))
    assert all(len(g) >= MIN_GROUP for g in groups) and len(groups) > 1
    # groups do not overlap in length, and pad far less than one call padded to the longest
    spans = [(min(lengths[i] for i in g), max(lengths[i] for i in g)) for g in groups]
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:]))
    assert padded(lengths, groups) < 0.7 * len(lengths) * max(lengths)


def test_length_groups_keep_one_group_when_lengths_are_alike_or_few():
    assert length_groups([10] * 40) == [list(range(40))]
    assert len(length_groups([3] * 5 + [40] * 3)) == 1  # too few for a group of their own


def test_grouped_encoding_gives_the_vectors_and_gradients_of_one_call():
    torch.manual_seed(0)
    enc = tiny_encoder(max_length=48)
    rng = random.Random(1)
    words = "which films did the director of [E] write in what year".split()
    texts = [" ".join(rng.choice(words) for _ in range(rng.choice([2, 4, 9, 20, 35]))) for _ in range(48)]
    ids = enc.tokenizer(texts, truncation=True, max_length=48)["input_ids"]
    assert len(length_groups([len(x) for x in ids])) > 1  # the test reaches the grouped path

    grouped = enc(texts)
    grouped.pow(2).sum().backward()
    g1 = [p.grad.clone() for p in enc.parameters() if p.grad is not None]
    enc.zero_grad()
    one = enc._pooled(enc.tokenize(texts), torch.device("cpu"))
    one.pow(2).sum().backward()
    g2 = [p.grad for p in enc.parameters() if p.grad is not None]
    assert torch.allclose(grouped, one, atol=1e-5)
    assert all(torch.allclose(a, b, atol=1e-4, rtol=1e-3) for a, b in zip(g1, g2))


def test_sparse_embedding_gradient_is_the_dense_one_made_dense_once_per_backward():
    from rra.models.encoder import sparse_embedding_grads

    torch.manual_seed(0)
    enc = tiny_encoder(max_length=48)
    texts = ["which films did [E] write", "in what year was [E] born", "who directed the films of [E] in 1999"]

    def gradient():
        enc.zero_grad(set_to_none=True)
        # two encoder calls in one backward pass, as a training step makes them, then a second pass that
        # accumulates into the gradient the first left (gradient accumulation)
        (enc(texts[:2]).pow(2).sum() + enc(texts[1:]).sum()).backward()
        enc(texts[2:]).sum().backward()
        return {n: p.grad.clone() for n, p in enc.named_parameters() if p.grad is not None}

    enc.eval()  # no dropout: the same function each call
    dense = gradient()
    emb = enc.model.get_input_embeddings()
    sparse_embedding_grads(enc.model, True)
    sparse = gradient()
    assert emb.sparse and not emb.weight.grad.is_sparse  # what the optimizer sees is dense again
    assert dense.keys() == sparse.keys()
    assert all(torch.allclose(dense[n], sparse[n], atol=1e-6) for n in dense)
    sparse_embedding_grads(enc.model, False)
    assert not emb.sparse and gradient()["model.embeddings.word_embeddings.weight"].equal(
        dense["model.embeddings.word_embeddings.weight"])
    emb.weight.requires_grad_(False)  # a frozen embedding stays as it is
    sparse_embedding_grads(enc.model, True)
    assert not emb.sparse
