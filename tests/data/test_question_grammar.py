"""The built-in questions read as English: no doubled words, articles once, verbs agreeing with
the phrase they govern, plural titles spelled right. Checked per template and over every
generated built-in question."""
import random
import re

import pytest
import yaml

from rra.data.builtin import SPLIT_SIZES, builtin_labels_path, builtin_questions, builtin_templates_path
from rra.data.question_templates import Phrase, Template, Templates

DOUBLED = re.compile(r"\b(\w+) \1\b", re.IGNORECASE)
PLURAL_HEADS = r"(books|titles|works|writers|authors|cities|publishers|publishing houses|stories|winners|genres)"
SINGULAR_HEADS = (r"(author|writer|publisher|house|genre|year|publication year|language|city|setting|award|prize|"
                  r"book|predecessor|sequel|birthplace|country|home city)")
# a singular verb right before a plural phrase, or the other way round
DISAGREE = [re.compile(rf"\b(is|was|does|has) the( \[[^\]]+\])? {PLURAL_HEADS}\b"),
            re.compile(rf"\b(are|were|do|have) the {SINGULAR_HEADS}\b")]
INNER = {  # what a slot can hold: a bare name, noun phrases of either number, one with text after the name
    "name": Phrase("[Golden Quill Prize]"),
    "singular": Phrase("the city of [X]", plural=False, name=False),
    "plural": Phrase("the books of [X]", plural=True, name=False),
    "open": Phrase("the city where [X] is set", plural=False, name=False, open_end=True),
}


def problems(text: str) -> list[str]:
    found = [f"doubled word {m.group(0)!r}" for m in DOUBLED.finditer(text)]
    found += [f"disagreement {m.group(0)!r}" for rule in DISAGREE for m in rule.finditer(text)]
    return found + [f"leftover brace in {text!r}" for _ in re.findall(r"[{}|]", text)]


def builtin_template_texts():
    table = yaml.safe_load(builtin_templates_path().read_text())
    return [(rel, key, t) for rel, entry in table.items() for key, items in entry.items() for t in items]


@pytest.mark.parametrize("relation,key,text", builtin_template_texts())
def test_every_builtin_template_reads_right_with_every_inner_phrase(relation, key, text):
    template = Template(text, plural=key == "phrase_plural")
    for kind, inner in INNER.items():
        if not template.fits(inner):
            assert kind in ("singular", "plural", "open")
            continue
        out = template.fill(inner).text
        assert not problems(out), (kind, out)
        assert "[X]" in out or "[Golden Quill Prize]" in out
        if "{the" in text and kind == "name":
            assert "the [Golden Quill Prize]" in out or "the genre [" in out or "the year [" in out


def test_agreement_and_articles_follow_the_inner_phrase():
    where = Template("where {is|are} {e} set")
    assert where.fill(INNER["name"]).text == "where is [Golden Quill Prize] set"
    assert where.fill(INNER["plural"]).text == "where are the books of [X] set"
    won = Template("which books won {the e}")
    assert won.fill(INNER["name"]).text == "which books won the [Golden Quill Prize]"
    assert won.fill(INNER["singular"]).text == "which books won the city of [X]"
    genre = Template("the books in {the genre e}", plural=True)
    nested = genre.fill(Phrase("[poetry]"))
    assert nested.text == "the books in the genre [poetry]" and nested.plural and not nested.name
    assert not Template("the {name} titles").fits(INNER["plural"])
    # a phrase with text after its name never goes where text follows the slot: no "is based based"
    assert not where.fits(INNER["open"]) and Template("what is the setting of {e}").fits(INNER["open"])
    assert Template("the city where {e} {is|are} set").fill(INNER["name"]).open_end


def test_every_builtin_relation_has_templates_that_fit_any_phrase():
    """So the built-in questions never fall back to the generic wording."""
    templates = Templates.load(builtin_templates_path())
    for relation, entry in templates.table.items():
        for kind in ("question", "phrase"):
            assert any(t.fits(INNER["open"]) and t.fits(INNER["plural"]) for t in getattr(entry, kind)), (relation, kind)


def test_no_generated_builtin_question_has_a_doubled_word_or_disagreement():
    questions = [q.question for split in SPLIT_SIZES for q in builtin_questions(split)]
    chains = sum(1 for split in SPLIT_SIZES for q in builtin_questions(split) if "plan" not in q.extra)
    assert chains == sum(SPLIT_SIZES.values()) and len(questions) > chains  # the chains and the shapes beyond

    bad = [(q, problems(q)) for q in questions if problems(q)]
    assert not bad, bad[:10]


def test_random_nestings_of_every_builtin_relation_read_right():
    """Beyond the built-in sample: 3,000 random 1-3 hop paths over the templated relations."""
    templates = Templates.load(builtin_templates_path())
    relations = sorted(templates.table)
    rng = random.Random(0)
    for _ in range(3000):
        path = [rng.choice(relations) for _ in range(rng.randint(1, 3))]
        text = templates.question(path, "[Lamplight Press]", rng)
        assert not problems(text), (path, text)


def test_builtin_titles_have_english_plurals():
    titles = [line.split("\t")[1] for line in builtin_labels_path().read_text().splitlines() if line.startswith("book/")]
    nouns = [t.split(" of ")[0] for t in titles if " of " in t]
    assert nouns and not [n for n in nouns if re.search(r"(ss|[^aeiou]ys)$", n)], nouns
