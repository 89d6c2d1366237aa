"""docs/ARCHITECTURE.md says a new baseline or a new LLM backend is one module plus one config file,
nothing else. This test is that claim: both are written to a temporary folder (a module outside
the package and a yaml in a config dir on Hydra's search path), and a whole `infer` run uses them
with the built-in KG, through the same evaluation loop, metrics and summary as every method."""
import json
from pathlib import Path

from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import open_dict

REPO = Path(__file__).resolve().parents[1]

MODULE = '''
import re
from dataclasses import dataclass

from rra.baselines.common import BaselineSettings, missing_status, set_answers, topic_entities
from rra.llm.base import LLM, LLMReply, LLMUsage, prompt_to_text


@dataclass(eq=False)
class OneHop(BaselineSettings):
    """Asks the LLM which relation of the topic entity answers the question, returns its ends."""

    name = "one_hop"
    max_relations: int = 40

    def explore(self, example, pred, trace):
        topics = topic_entities(self.kg, example)
        status = missing_status(example, topics)
        if status:
            pred.status = status
            return
        relations = self.kg.relations(topics[0])[: self.max_relations]
        prompt = f"Question: {example.question}\\nOptions: {'; '.join(relations)}\\nThe best option is:"
        reply = trace.ask([prompt])[0]
        pred.reply = reply.text
        chosen = reply.text.strip()
        if reply.ok and chosen not in relations:
            trace.bad_reply("relation", reply)
        ends = self.kg.neighbors(topics[0], chosen) if chosen in relations else []
        pred.paths = [{"path": [chosen], "score": 1.0}] if ends else []
        set_answers(pred, ends, free_form=False)
        pred.status = trace.status("ok" if ends else "no_path")


class WordOverlapLLM(LLM):
    """A stand-in model: replies with the option sharing the most words with the question."""

    def __init__(self, name="word_overlap"):
        self.name, self.model, self.usage = name, "word-overlap", LLMUsage()

    def generate(self, prompts, max_new_tokens=128, temperature=0.0):
        replies = []
        for p in prompts:
            text = prompt_to_text(p)
            q = set(re.findall(r"[a-z]+", text.split("\\n")[0].lower()))
            options = text.split("Options: ")[1].split("\\n")[0].split("; ")
            best = max(options, key=lambda o: len(q & set(re.split(r"[^a-z]+", o.lower()))))
            reply = LLMReply(best, prompt_tokens=len(text.split()), completion_tokens=1)
            self.usage.record(reply)
            replies.append(reply)
        return replies

    def score(self, prompt, continuations, reduction="sum"):
        raise NotImplementedError("word_overlap does not score continuations")
'''


def test_a_new_baseline_and_llm_backend_are_one_module_and_one_yaml_each(tmp_path, monkeypatch):
    from rra.eval.run import run_split

    (tmp_path / "my_kgqa.py").write_text(MODULE)
    conf = tmp_path / "conf"
    (conf / "method").mkdir(parents=True)
    (conf / "llm").mkdir()
    (conf / "method" / "one_hop.yaml").write_text("_target_: my_kgqa.OneHop\nmode: llm\nmax_relations: 40\n")
    (conf / "llm" / "word_overlap.yaml").write_text("_target_: my_kgqa.WordOverlapLLM\nname: word_overlap\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose("infer", overrides=[f"hydra.searchpath=[file://{conf}]", "method=one_hop",
                                          "llm=word_overlap", "logger=none", "limit=30", "show_summary=false"],
                      return_hydra_config=True)
    HydraConfig().set_config(cfg)
    with open_dict(cfg):
        cfg.paths.output_dir = str(tmp_path / "run")
    metrics = run_split(cfg, tmp_path / "run")

    assert metrics["method"] == "one_hop" and metrics["n"] == 30
    assert metrics["llm_calls_per_q"] == 1.0 and metrics["llm_usage"]["calls"] == 30
    assert metrics["llm_answered"] == 100.0  # every reply named one of the options
    assert 0 < metrics["hits@1"] < 100  # one hop answers some of the 1-3 hop questions, not all
    preds = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert {p["status"] for p in preds} <= {"ok", "no_path"}
    assert all(p["llm_calls"] == 1 and p["reply"] for p in preds)
    summary = (tmp_path / "run" / "summary.md").read_text()  # markdown-escaped names
    assert "**method**: one\\_hop" in summary and "word\\_overlap (word-overlap)" in summary
