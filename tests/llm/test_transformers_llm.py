"""TransformersLLM on a tiny randomly initialised Llama with the packaged MiniLM tokenizer (fast), and
one integration test on the real packaged SmolLM2 GGUF."""
import time
from pathlib import Path

import pytest
import torch
from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

from rra.llm import LLM, TransformersLLM
from rra.resources import packaged_encoder_path

CHAT_TEMPLATE = ("{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }} {% endfor %}"
                 "{% if add_generation_prompt %}[assistant]{% endif %}")


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(packaged_encoder_path())
    tok.eos_token = "[SEP]"
    tok.chat_template = CHAT_TEMPLATE
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                      eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    return LlamaForCausalLM(cfg), tok


def make(tiny, **kw):
    lm, tok = tiny
    return TransformersLLM.from_objects(lm, tok, **kw)


def test_batched_generation_matches_one_by_one(tiny):
    llm = make(tiny, batch_size=4)
    assert isinstance(llm, LLM)
    prompts = ["who directed alien", "a much longer prompt about the films of ridley scott and others",
               [{"role": "user", "content": "chat style"}], "x"]
    batched = llm.generate(prompts, max_new_tokens=6)
    single = [llm.generate([p], max_new_tokens=6)[0] for p in prompts]
    assert [r.text for r in batched] == [r.text for r in single]
    assert all(r.ok and 0 < r.completion_tokens <= 6 and r.prompt_tokens > 0 for r in batched)
    assert llm.usage.calls == 8 and llm.usage.completion_tokens == 2 * sum(r.completion_tokens for r in batched)
    assert llm.usage.seconds > 0


def test_chat_template_applied_to_plain_prompts_only_when_asked(tiny):
    assert make(tiny).render("hi")[0] == "[user] hi [assistant]"
    assert make(tiny, plain_as_chat=False).render("hi") == ("hi", False)
    msgs = [{"role": "user", "content": "hi"}]
    assert make(tiny, plain_as_chat=False, system_prompt="S").render(msgs)[0] == "[system] S [user] hi [assistant]"


def test_long_prompt_is_cut_in_the_middle_not_crashed(tiny):
    llm = make(tiny, max_input_tokens=64)
    prompt = "instructions first " + "knowledge " * 300 + "question last"
    (r,) = llm.generate([prompt], max_new_tokens=8)
    assert r.ok and r.truncated_tokens > 250 and r.prompt_tokens <= 64 - 8
    ids, cut = llm.encode(prompt, 56)
    text = llm.tokenizer.decode(ids)
    assert text.startswith("[ user ] instructions first") and "tokens cut" in text
    assert text.rstrip().endswith("question last [ assistant ]") and cut == r.truncated_tokens


@pytest.mark.parametrize("prefix_cache", [True, False])
def test_score_matches_a_plain_forward_pass(tiny, prefix_cache):
    lm, tok = tiny
    llm = make(tiny, batch_size=2, plain_as_chat=False, prefix_cache=prefix_cache)
    prompt, conts = "the film alien was directed by", [" ridley scott", " james", " a very long answer here", ""]
    got = llm.score(prompt, conts)
    p_ids = tok(prompt)["input_ids"]  # raw prompts get the tokenizer's special tokens (BOS on causal LMs)
    for c, s in zip(conts[:3], got):
        c_ids = tok(c, add_special_tokens=False)["input_ids"]
        ids = torch.tensor([p_ids + c_ids])
        with torch.no_grad():
            logp = torch.log_softmax(lm(ids).logits[0, :-1].float(), -1)
        want = sum(float(logp[len(p_ids) - 1 + j, t]) for j, t in enumerate(c_ids))
        assert s == pytest.approx(want, abs=1e-4)
    assert got[3] == 0.0
    mean = llm.score(prompt, conts[:1], reduction="mean")[0]
    assert mean == pytest.approx(got[0] / len(tok(conts[0], add_special_tokens=False)["input_ids"]), abs=1e-5)
    assert llm.usage.calls == 2 and llm.prefix_cache is prefix_cache  # no silent fallback


def test_model_failure_in_a_batch_becomes_error_replies(tiny, monkeypatch):
    llm = make(tiny)
    real = llm._generate_batch

    def flaky(batch, *a):
        if len(batch) > 1 or any(len(ids) > 12 for ids in batch):
            raise RuntimeError("out of memory")
        return real(batch, *a)

    monkeypatch.setattr(llm, "_generate_batch", flaky)
    short, long = llm.generate(["hi", "a prompt that is long enough to fail every time"], max_new_tokens=3)
    assert short.ok and long.error.startswith("generation: RuntimeError: out of memory")
    assert llm.usage.failures == 1


def test_stop_strings_cut_replies(tiny):
    llm = make(tiny)
    text = llm.generate(["stop test"], max_new_tokens=8)[0].text
    if not text:
        pytest.skip("random model produced an empty reply")
    word = text.split()[0]
    assert make(tiny, stop=[word]).generate(["stop test"], max_new_tokens=8)[0].text == ""


def test_missing_gguf_names_the_problem(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.gguf"):
        TransformersLLM(model=str(tmp_path / "nope.gguf")).load()


def test_saved_model_directory_loads_back_with_same_outputs(tiny, tmp_path):
    # The GGUF conversion cache saves exactly like this; loading then goes through the HF-directory path.
    lm, tok = tiny
    from rra.resources import _save_converted

    _save_converted(lm, tok, tmp_path / "converted")
    assert (tmp_path / "converted" / "config.json").is_file()
    assert not list(tmp_path.glob("*.tmp-*"))  # the temporary directory was renamed, not left behind
    reloaded = TransformersLLM(model=str(tmp_path / "converted"), device="cpu")
    prompts = ["who directed alien", [{"role": "user", "content": "chat"}]]
    want = [r.text for r in make(tiny).generate(prompts, max_new_tokens=5)]
    assert [r.text for r in reloaded.generate(prompts, max_new_tokens=5)] == want


@pytest.mark.integration
def test_packaged_smollm2_generates_and_scores():
    start = time.perf_counter()
    # Packaged SmolLM2-135M-Instruct GGUF. The first run on a machine converts it (tens of seconds)
    # and caches the conversion under ~/.cache/rra; later runs load that in seconds.
    llm = TransformersLLM(batch_size=2)
    a, b = llm.generate(["What is the capital of France? Answer in one word.", "Say hello."], max_new_tokens=8)
    assert a.ok and b.ok and a.text and b.text and 0 < a.completion_tokens <= 8
    knowledge = "Facts: (Alien, directed_by, Ridley Scott).\nQuestion: who directed Alien?\nAnswer:"
    right, wrong = llm.score(knowledge, [" Ridley Scott", " Banana Pudding"], reduction="mean")
    assert right > wrong
    assert llm.usage.calls == 3
    assert list(Path(llm.gguf_cache_dir).expanduser().glob("SmolLM2-135M-Instruct*/config.json"))
    print(f"SmolLM2 load+generate+score: {time.perf_counter() - start:.1f}s; replies {a.text!r} {b.text!r}")
