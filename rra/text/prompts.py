"""The answering prompts RRA and the baselines share (a method's own prompts stay with the method)."""

# The RRA paper's answering prompt (knowledge first, then the question).
RRA_ANSWER_PROMPT = (
    "Below are the facts that might be relevant to answer the question:\n{knowledge}\n\n"
    "Question: {question}\nAnswer:"
)
NO_KNOWLEDGE_PROMPT = "Question: {question}\nAnswer:"
CHOICE_PROMPT = (
    "Below are the facts that might be relevant to answer the question:\n{knowledge}\n\n"
    "Question: {question}\nChoose the correct answer from these options:\n{options}\n"
    "Reply with the number of the correct option only.\nAnswer:"
)
# The baselines' answering prompts (ToG's wording): triplets in, " | "-separated entities out.
TRIPLES_ANSWER_PROMPT = """Given a question and knowledge graph triplets (entity, relation, entity), answer the question using the triplets and your knowledge.
Reply with only the answer entities, separated by " | ".

Question: {question}
Knowledge triplets:
{knowledge}
Answer:"""
OWN_KNOWLEDGE_PROMPT = """Answer the question with your own knowledge.
Reply with only the answer entities, separated by " | ".

Question: {question}
Answer:"""
