"""Query plans: what a question asks of the graph and how it reads. A plan (`plan`: anchors, one
relation path each, conditions, a named intermediate, an aggregation, and the data contract that
gives one in a question file) runs on any graph backend (`execution`); the candidate plans of a
question are built from the graph around its anchors (`candidates`), from reads of the graph made
together for a batch of questions (`reads`); `text` is how a plan and a question read to the plan
ranker and to a person. Callers import from the module that holds a thing.
"""
