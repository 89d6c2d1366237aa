import pytest

from rra.graph import Triple
from rra.llm import ScriptedLLM
from rra.pipeline.retrieve import QuestionContext
from rra.pipeline.rewrite import LLMRewriter, TemplateRewriter, TripleRewriter
from rra.text.relations import relation_words

T = [Triple("Heat", "starred_actors", "Al Pacino"), Triple("Heat", "starred_actors", "Robert De Niro"),
     Triple("Heat", "release_year", "1995")]


def test_triple_form_one_line_each_and_inverse_written_forward():
    text = TripleRewriter().rewrite("q", T + [Triple("Michael Mann", "^directed_by", "Heat")])
    lines = text.splitlines()
    assert lines[0] == "(Heat, starred actors, Al Pacino)"
    assert lines[-1] == "(Heat, directed by, Michael Mann)"
    assert len(lines) == 4


def test_template_groups_by_head_and_relation():
    text = TemplateRewriter().rewrite("q", T)
    assert text == "Heat stars Al Pacino and Robert De Niro. Heat was released in 1995."


def test_template_generic_fallback_and_custom_table():
    assert relation_words("film.film.country") == "country"
    assert relation_words("hasGenre") == "has genre"
    assert relation_words("^http://x.org/onto/birthPlace") == "birth place"
    t = TemplateRewriter({"birthPlace": "{head} was born in {tail}"})
    assert t.rewrite("q", [Triple("Ann", "birthPlace", "Oslo")]) == "Ann was born in Oslo."
    assert t.rewrite("q", [Triple("Ann", "hasPet", "Rex")]) == "Ann has pet Rex."
    with pytest.raises(ValueError, match="must contain"):
        TemplateRewriter({"r": "{head} only"})


def test_llm_rewriter_uses_reply_and_chunks():
    llm = ScriptedLLM(default="Heat stars Al Pacino.")
    rw = LLMRewriter(llm, chunk_size=2)
    c = QuestionContext("who acted in Heat", T)
    text = rw.rewrite_many([c])[0]
    assert text.splitlines() == ["Heat stars Al Pacino."] * 2
    assert llm.usage.calls == 2 and c.trace.errors == [] and c.trace.usage.calls == 2
    assert rw.rewrite("who acted in Heat", T) == text
    assert "(Heat, starred actors, Al Pacino)" in llm.prompt_texts[0]


def test_llm_rewriter_falls_back_to_template_on_failure_and_empty_reply():
    llm = ScriptedLLM([ScriptedLLM.timeout(), ""])
    rw = LLMRewriter(llm, chunk_size=2)
    c = QuestionContext("q", T)
    text = rw.rewrite_many([c])[0]
    assert text.splitlines() == ["Heat stars Al Pacino and Robert De Niro.", "Heat was released in 1995."]
    errors = c.trace.errors
    assert len(errors) == 2 and "timeout" in errors[0] and "empty" in errors[1]
    with pytest.raises(ValueError, match="needs an LLM"):
        LLMRewriter(None)
