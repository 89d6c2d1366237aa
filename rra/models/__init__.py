"""Trainable models: the retriever (encoder, hop classifier, relation-path predictor) and the rewriter."""
