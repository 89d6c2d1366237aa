"""Text every part shares, each defined once, one subject a module: how a relation reads
(`relations`), a question's `[topic]` marks (`questions`), the loose form names are matched in, the
form answers are scored in and the names a text mentions (`matching`), the span of a question that
names a given entity (`spans`), facts as template sentences and as the trained rewriter's input
(`facts`), and the answering prompts (`prompts`). How a query plan reads is with the plans
(rra.plans.text). Callers import from the module that holds a thing: this package re-exports nothing.
"""
