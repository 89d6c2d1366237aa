"""What `python infer.py` does, kept out of the script so tests and benchmarks call it directly.

`build(cfg)` instantiates the graph, the LLM (if any) and the QA method (`cfg.method`: RRA or a
baseline; every method gets the same `kg` and `llm`). `answer_question` answers one question and
prints its evidence; `run_split` answers a whole split, streaming predictions to JSONL (resuming
a previous run in the same output dir), then writes metrics.json and summary.md and logs the
metrics to the configured loggers.
"""
from __future__ import annotations

import json
import logging
import time
from collections import Counter
from pathlib import Path

from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf
from tqdm import tqdm

from rra.config import build_graph, graph_description
from rra.data.coverage import question_coverage
from rra.data.dataset import SPLITS, Dataset
from rra.eval import integrity, misses, report, shards
from rra.eval.metrics import compute_metrics
from rra.methods import QAMethod
from rra.records import Prediction, QAExample, Status

log = logging.getLogger("infer")


def build(cfg: DictConfig):
    from rra.llm import build_llm

    kg = build_graph(cfg)
    llm = build_llm(cfg.get("llm"), cache_path=cfg.get("llm_cache"))
    if llm is not None and int(cfg.get("concurrency", 1) or 1) > 1:
        from rra.llm.batching import BatchingLLM

        llm = BatchingLLM(llm, max_batch=int(cfg.get("llm_max_batch", 32)))  # pool the threads' calls
    log.info("method <%s>, llm %s", cfg.method.get("_target_"), getattr(llm, "name", None))
    return kg, llm, build_method(cfg, kg, llm)


def build_method(cfg: DictConfig, kg, llm, **shared) -> QAMethod:
    """`cfg.method` on the given graph and LLM (and any `shared` object its config names, such as a
    sentence encoder a benchmark shares between methods), refused unless it is a QA method."""
    node = cfg.method
    from hydra.errors import InstantiationException

    from rra.graph.base import GraphError

    try:
        method = instantiate(node, kg=kg, llm=llm, **{k: v for k, v in shared.items() if k in node})
    except InstantiationException as err:  # a store that is down while the method reads the KG: say that
        if isinstance(err.__cause__, GraphError):
            raise err.__cause__ from None
        raise
    if not isinstance(method, QAMethod):
        raise TypeError(f"method: {type(method).__name__} is not a QA method (subclass rra.methods.QAMethod: "
                        "`name`, `answer(example) -> Prediction`; `describe` comes with it)")
    if cfg.get("strict", False):  # a method's unexpected exception stops the run (rra.methods.failure_status)
        method.strict = True
    return method


def load_split(cfg: DictConfig, split: str, kg) -> list[QAExample]:
    """Questions of `split` from the dataset's source of that name (rra.data.dataset.Dataset): the
    same sources train.py's datamodule reads."""
    dataset = Dataset.from_config(cfg.data)
    if split not in SPLITS or not dataset.has(split):
        have = [k for k in SPLITS if dataset.has(k)]
        raise ValueError(f"the data config has no {split!r} question source; use split={'|'.join(have)}")
    source = dataset.questions(split, kg)
    if source is None:  # e.g. data=files without a file for this split
        raise ValueError(f"the data config has no questions for split={split!r}: "
                         f"set data.{split}_file=FILE (JSONL or TSV, see conf/data/files.yaml)")
    examples = list(source)
    seen: dict[str, int] = {}
    for i, ex in enumerate(examples):  # every prediction needs a stable, unique id for resuming
        ex.qid = str(ex.qid) if ex.qid not in (None, "") else f"{split}-{i}"
        if ex.qid in seen:
            raise ValueError(f"split {split!r}: question {i + 1} has the same qid {ex.qid!r} as question "
                             f"{seen[ex.qid] + 1}; qids must be unique (results are stored and resumed by qid)")
        seen[ex.qid] = i
    limit = check_limit(cfg.get("limit"))
    examples = examples[:limit] if limit else examples
    name_gold_answers(examples, kg)
    return examples


def name_gold_answers(examples: list[QAExample], kg) -> None:
    """Say how each gold answer is named in the KG, so scoring does not depend on whether a dataset
    gives answers as KG ids, as names or as values written as text: an answer the KG holds as a
    node gets its label (`answer_labels`, for replies that name it); any other answer is looked up
    (`rra.graph.answers.resolve_answers`: a literal in another spelling, an entity's label, a value
    of the same number or date, so "2017" and "2017.0" name `"2017"^^xsd:gYear`) and the ids found
    count as that answer (`answer_ids`). A few batched lookups for the whole split; data that
    already names its answers (the question generator) is left as it is."""
    todo = [ex for ex in examples if ex.answers and not ex.answer_labels]
    if not todo:
        return
    from rra.graph.answers import resolve_answers
    from rra.graph.base import GraphError

    try:
        labels, ids = resolve_answers(kg, (a for ex in todo for a in ex.answers))
    except GraphError as err:  # scoring then compares the answers as given; the run goes on
        log.warning("could not look the gold answers up in the KG (%s); they are scored as given", err)
        return
    for ex in todo:
        ex.answer_labels = [labels.get(a, a) for a in ex.answers]
        ex.answer_ids = [[a] if a in labels else list(ids.get(a, [])) for a in ex.answers]


def question_seconds(cfg: DictConfig) -> float | None:
    """`bounds.max_seconds`: each question's time budget (null or 0: none)."""
    value = OmegaConf.select(cfg, "bounds.max_seconds", default=None)
    if value in (None, 0):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"bounds.max_seconds must be null or a positive number of seconds, got {value!r}")
    return float(value)


def check_limit(limit):
    """`limit`: null (every question) or a positive number of questions."""
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be null (all questions) or a positive integer, got {limit!r}")
    return limit


def answer_question(cfg: DictConfig, method=None, kg=None) -> Prediction:
    if method is None:
        kg, _, method = build(cfg)
    pred = method.answer(QAExample(cfg.question, [], [], qid="cli"))
    print(format_prediction(pred))
    return pred


def format_prediction(p: Prediction) -> str:
    from rra.graph.rdf import compact, compact_joined  # IRIs of well-known namespaces as CURIEs: dbo:birthPlace
    lines = [f"question: {p.question}", f"status:   {p.status}"]
    if p.topic_entities:
        lines.append(f"topic:    {', '.join(p.topic_entities)}")
    plan = p.extra.get("plan")
    if plan:  # a question beyond one chain: the plan that answered it, and its rivals
        lines.append(f"plan:     {plan['shape']}  (anchors: {', '.join(plan['anchors'])})")
    if p.extra.get("plans") and (plan or p.extra.get("plan_kind") not in (None, "chain")):
        from rra.plans.plan import QueryPlan

        for d in p.extra["plans"][:3]:  # the chosen plan and its rivals
            lines.append(f"  {d['score']:.4f}  {QueryPlan.from_dict(d).describe()}  ({d['n_ends']} answers)")
    if p.extra.get("plan_fallback"):
        lines.append(f"plan:     answered as one chain: {'; '.join(p.extra['plan_fallback'])}")
    if p.paths:
        lines.append("paths:")
        lines += [f"  {d['score']:.4f}  {' -> '.join(map(compact, d['path']))}  ({d.get('instances', '?')} instances)"
                  for d in p.paths]
    if p.triples:
        from_path = p.extra.get("evidence_paths") or [""] * len(p.triples)
        lines.append(f"triples ({len(p.triples)}):")
        lines += [f"  ({compact(t.head)}, {compact(t.relation)}, {compact(t.tail)})   [{compact_joined(src)}]"
                  for t, src in zip(p.triples[:30], from_path)]
        if len(p.triples) > 30:
            lines.append(f"  ... {len(p.triples) - 30} more")
    if p.knowledge:
        lines += ["knowledge:", "  " + p.knowledge.replace("\n", "\n  ")]
    if p.reply:
        lines.append(f"reply:    {p.reply}")
    cands = p.extra.get("candidates")
    if cands:  # the graph scorer: ranked answers with their scores and evidence paths
        kept = set(p.answers)
        lines.append("answers:")
        for i, c in enumerate(cands[:10], 1):
            mark = "" if c["entity"] in kept else "   (below the answer cut-off)"
            lines.append(f"  {i}. {c['label']}  {c['score']:.4f}  via {' -> '.join(map(compact, c['path']))}{mark}")
        if len(cands) > 10:
            lines.append(f"  ... {p.extra.get('candidates_total', len(cands)) - 10} more candidates")
    else:
        shown = p.answer_labels or p.answers
        lines.append(f"answer:   {', '.join(map(str, shown[:10])) if shown else '(none)'}")
    if p.errors:
        lines += ["errors:"] + [f"  {e}" for e in p.errors]
    lines.append(f"llm calls: {p.llm_calls}, tokens: {p.llm_prompt_tokens}+{p.llm_completion_tokens}, "
                 f"{p.latency_s:.3f} s")
    return "\n".join(lines)


def run_split(cfg: DictConfig, out_dir: str | Path | None = None) -> dict:
    out = Path(out_dir or cfg.paths.output_dir)
    spec = shards.ShardSpec.from_config(cfg)  # `shard=i num_shards=n`: one slice, in its own directory
    if spec is not None:
        out = out / spec.dirname
    out.mkdir(parents=True, exist_ok=True)
    with integrity.RunLock(out):  # a refused run stops here, having written nothing in `out`
        check_limit(cfg.get("limit"))  # before anything slow is built
        resume = bool(cfg.get("resume", True))
        digest = OmegaConf.select(cfg, "integrity.digest", default="sample")
        # a resume refused for a different setup leaves the run's record (.hydra/) as it was
        integrity.check_resume(out, integrity.fingerprint(cfg), resume, digest)
        save_hydra_record(cfg, out)
        return _run_split(cfg, out, spec)


def save_hydra_record(cfg: DictConfig, out: Path, subdir: str = ".hydra") -> None:
    """What Hydra's `output_subdir` would hold (config.yaml, hydra.yaml, overrides.yaml), written
    only by the run that holds the directory's lock (conf/infer.yaml turns Hydra's own off)."""
    try:
        from hydra.core.hydra_config import HydraConfig

        hydra_cfg = HydraConfig.get()
    except Exception:  # composed without Hydra's runtime config: nothing to record
        return
    if hydra_cfg.get("output_subdir") is not None:  # Hydra already wrote it (another entry point's config)
        return
    target = out / subdir
    target.mkdir(parents=True, exist_ok=True)
    OmegaConf.save(cfg, target / "config.yaml")
    OmegaConf.save(OmegaConf.create({"hydra": hydra_cfg}), target / "hydra.yaml")
    OmegaConf.save(hydra_cfg.overrides.task, target / "overrides.yaml")


def _run_split(cfg: DictConfig, out: Path, spec: shards.ShardSpec | None = None) -> dict:
    resume = bool(cfg.get("resume", True))
    if spec is not None and resume and shards.is_complete(out, cfg.get("limit")):  # resubmitted, nothing left
        log.info("shard %d of %d is complete in %s; nothing to answer", spec.index, spec.count, out)
        return json.loads((out / report.METRICS).read_text(encoding="utf-8"))
    kg, llm, method = build(cfg)
    examples = load_split(cfg, cfg.split, kg)
    if spec is not None:
        examples = shards.take(spec, cfg.split, examples, out, cfg.get("limit"), resume)
    oracle = oracle_of(llm)
    if oracle is not None:  # llm=oracle: it answers from the gold labels this loop holds
        oracle.observe(examples, kg)
    writer = report.PredictionWriter(out / report.PREDICTIONS, resume=resume, redo=integrity.TRANSIENT)
    done = sum(ex.qid in writer.done for ex in examples)
    if done:
        log.info("resuming: %d of %d questions already answered in %s", done, len(examples), writer.path)
    requests_before = getattr(kg, "requests", None)  # SPARQL backends count their queries
    metrics, preds = answer_and_score(method, examples, writer, int(cfg.get("batch_size", 32)),
                                      int(cfg.get("concurrency", 1) or 1),
                                      desc=f"{getattr(method, 'name', 'method')} {cfg.split}",
                                      question_seconds=question_seconds(cfg))
    metrics.update(split=cfg.split, method=getattr(method, "name", "?"))
    if requests_before is not None and metrics["new_questions"]:
        metrics["graph_requests_per_question"] = round((kg.requests - requests_before) / metrics["new_questions"], 3)
    if llm is not None:
        metrics["llm_usage"] = llm.usage.to_dict()
    loaded = getattr(kg, "load_report", None)
    if loaded is not None and loaded.skipped:  # graph.on_error=skip dropped lines of the KG or labels
        metrics["kg_skipped_lines"] = loaded.skipped
        metrics["kg_skipped_first"] = list(loaded.reasons[:5])
    if oracle is not None:
        metrics["llm_oracle"] = True
    warned = sum(1 for ex in examples if ex.extra.get("plan_warnings"))
    if warned:  # questions whose given path or plan looked doubtful on the KG (rra.data.plan_check)
        metrics["plan_warnings"] = warned
    bounded = Counter(h.split(" (")[0].split(" of ")[0] for d in preds for h in (d.get("extra") or {}).get("bounds", []))
    if bounded:  # questions that hit a work bound (each says which in extra.bounds)
        metrics["bounds_hit"] = dict(bounded)
    folded = getattr(kg, "fold_report", None)
    if folded is not None:  # per-question graphs: compound values folded, unnamed ids kept as entities
        metrics.update(folded())
    failures = run_warnings(metrics, llm)
    coverage = question_coverage(method, [ex.question for ex in examples], cfg.split)
    if coverage is not None:  # does the encoder read the questions' language (rra/data/coverage.py)
        metrics["encoder_coverage"] = coverage.to_dict()
    warnings = failures + (coverage.warnings if coverage is not None else [])
    metrics["warnings"] = warnings
    # The method could not do its job (its LLM mostly failed, or most questions failed outright or
    # never reached retrieval): its figures are the fall-back's or nobody's, so a sweep must not read
    # them as the method's (optimized_metric).
    metrics["run_failed"] = bool(failures)
    report.write_json(out / report.METRICS, metrics)
    picked = choices()
    used_llm = metrics.get("llm_asked_n", 0) > 0
    setup = {"method": metrics["method"], "split": cfg.split,
             "data": picked.get("data"),
             "graph": f"{picked.get('graph') or cfg.graph.get('_target_')}: {graph_description(kg)}",
             "llm": (f"{getattr(llm, 'name', '?')} ({getattr(llm, 'model', '')})" if used_llm
                     else "none used (no question asked an LLM)"),
             **({"ceiling": "ORACLE LLM: every LLM reply comes from the gold labels (rra/llm/oracle.py); "
                            "these figures are the method's ceiling, not a model's"} if oracle is not None else {}),
             "output": str(out)}
    if coverage is not None:
        setup["encoder coverage"] = (f"{100 * coverage.unknown_share:.1f}% of the questions' tokens unknown to "
                                     f"{coverage.encoder}; {100 * coverage.shared_share:.1f}% of the questions "
                                     f"read as the same tokens as {coverage.shared_with}")
    if spec is not None:
        setup["shard"] = f"{spec.index} of {spec.count} (merge: python -m rra.eval.merge {out.parent})"
    setup.update(method.describe())
    text = report.summary_markdown(metrics, f"rra infer: {metrics['method']} on {cfg.split}", setup,
                                   [d for d in preds if d.get("status") != "ok"], warnings,
                                   [d for d in preds if d.get("status") == "ok"], misses.miss_groups(preds))
    report.write_text(out / report.SUMMARY, text)
    log_to_loggers(cfg, metrics, preds, out / report.SUMMARY)
    if cfg.get("show_summary", True):
        print(report.terminal_text(text))
    for w in warnings:
        log.warning(w)
    if failures and cfg.get("strict", False):
        raise RunFailedError(f"strict=true and the run has problems: {' '.join(failures)} (results kept in {out})")
    return metrics


def oracle_of(llm):
    """The oracle behind `llm` (through the batching / caching wrappers), or None."""
    while llm is not None and not getattr(llm, "oracle", False):
        llm = getattr(llm, "inner", None)
    return llm


def answer_and_score(method, examples: list[QAExample], writer: report.PredictionWriter, batch_size: int = 32,
                     concurrency: int = 1, max_seconds: float | None = None, desc: str = "",
                     question_seconds: float | None = None) -> tuple[dict, list[dict]]:
    """The evaluation loop of infer.py and the benchmarks: answer the examples that `writer` (an
    opened predictions.jsonl, resumed) does not hold yet, streaming each prediction to it, then
    score every example's latest prediction. `max_seconds`: stop after the question that crosses
    it (the metrics' `n` says how many were answered); `question_seconds`: each question's time
    budget (`bounds.max_seconds`). Returns (metrics, predictions)."""
    todo = [ex for ex in examples if ex.qid not in writer.done]
    wanted = {ex.qid for ex in examples}
    start = time.perf_counter()
    new = 0
    with writer, tqdm(total=len(todo), desc=desc or getattr(method, "name", "method"), unit="q",
                      dynamic_ncols=True) as bar:
        answers = answer_all(method, todo, batch_size, concurrency, question_seconds)
        for _, pred in answers:
            writer.write(pred)
            new += 1
            bar.update(1)
            if max_seconds and time.perf_counter() - start > max_seconds:
                answers.close()  # bounded: the run reports how many questions it got through
                break
    wall = time.perf_counter() - start
    preds = [d for d in integrity.latest_per_qid(report.read_predictions(writer.path)) if d.get("qid") in wanted]
    metrics = compute_metrics(preds, wall_s=wall if new == len(preds) else None)
    metrics.update(new_questions=new, wall_s=round(wall, 3))
    return metrics, preds


class RunFailedError(RuntimeError):
    """strict=true: the run finished, but most of its questions failed in a way the figures hide."""


def optimized_metric(metrics: dict) -> float | None:
    """What infer.py hands a sweep: Hits@1, or NaN for a run whose method could not do its job
    (`run_failed`: its LLM answered under half the questions that asked it, or most questions ended
    in llm_error / graph_error). Optuna records a NaN objective as a failed trial, so a sweep never
    picks the graph fall-back's figure as if the LLM had produced it."""
    if metrics.get("run_failed"):
        return float("nan")
    return metrics.get("hits@1")


def _input_errors() -> tuple:
    from rra.records import DataFormatError
    from rra.graph.base import GraphUnavailableError
    from rra.graph.loaders import CompressedFileError, EmptyKGError, KGFormatError

    return (DataFormatError, KGFormatError, EmptyKGError, CompressedFileError, FileNotFoundError,
            integrity.ResumeMismatchError, integrity.RunLockedError, RunFailedError, GraphUnavailableError,
            shards.ShardError)


# Statuses of a question that ended before retrieval: no topic entity found in its text, or the
# topic it names is not in the KG.
BEFORE_RETRIEVAL = ("no_topic_entity", "unknown_entity")


def run_warnings(metrics: dict, llm) -> list[str]:
    """What a reader of Hits@1 must know: most LLM calls failed (the answers then come from a
    fall-back), most questions failed outright, or most never reached retrieval (linking found no
    topic in the KG: a question language or naming the linker does not read)."""
    out, n = [], metrics.get("n", 0) or 0
    answered, asked = metrics.get("llm_answered"), metrics.get("llm_asked_n", 0)
    if answered is not None and answered < 50:
        out.append(f"the LLM answered only {answered:.0f}% of the {asked} questions that asked it; the "
                   "other answers come from a fall-back, so Hits@1 does not measure the LLM")
    failed = sum(c for s, c in (metrics.get("status") or {}).items() if s in integrity.TRANSIENT)
    if n and failed / n > 0.5:
        out.append(f"{failed} of {n} questions ended in llm_error/graph_error (they are retried on resume)")
    unlinked = sum(c for s, c in (metrics.get("status") or {}).items() if s in BEFORE_RETRIEVAL)
    if n and unlinked / n > 0.5:
        out.append(f"{unlinked} of {n} questions ({100 * unlinked / n:.1f}%) ended before retrieval "
                   f"(no_topic_entity / unknown_entity): the linker found no topic of theirs in the KG, so the "
                   "figures do not measure the method (check the KG's labels, the questions' language, "
                   "and topic_entities in the question file)")
    return out


def answer_all(method: QAMethod, examples: list[QAExample], batch_size: int = 32, concurrency: int = 1,
               max_seconds: float | None = None):
    """Yield (example, prediction with its gold labels attached) in order: the evaluation loop of
    infer.py and the benchmarks. Each `batch_size` questions go to `method.answer_batch` (RRA runs
    its encoder on the batch; the baselines answer `concurrency` of them at once in threads).
    `max_seconds`: each question's time budget (`bounds.max_seconds`; a batch gets its questions'
    budgets together); the bounds a question hit are in its prediction (`mark_bounds`)."""
    from rra.graph.base import question_budget

    kg = getattr(method, "kg", None)
    if getattr(kg, "per_question", False):  # each question on its own subgraph (rra.graph.subgraphs)
        yield from answer_each(method, kg, examples, max_seconds)
        return
    size = max(1, batch_size)
    for b in range(0, len(examples), size):
        batch = examples[b:b + size]
        # streamed as the method yields them (a baseline answers one by one): each is written before
        # the next is asked, so a kill loses nothing answered
        with question_budget(max_seconds * len(batch) if max_seconds else None) as budget:
            for ex, pred in zip(batch, method.answer_batch(batch, concurrency)):
                yield ex, with_gold(mark_bounds(pred, budget, len(batch) == 1), ex)


def answer_each(method: QAMethod, kg, examples: list[QAExample], max_seconds: float | None = None):
    """`answer_all` for per-question graphs: one question at a time, inside its own subgraph (so
    batch_size and concurrency do not apply), which also says whether the subgraph holds a gold
    answer at all (the ceiling, `rra.eval.metrics`)."""
    from rra.graph.base import GraphError, question_budget

    for ex in examples:
        with question_budget(max_seconds) as budget:
            try:
                with kg.scope(ex) as graph:
                    ids = [a for alias in ex.answer_ids or [[a] for a in ex.answers] for a in alias]
                    ex.extra["answer_in_subgraph"] = any(graph.has_entity(a) for a in ids)
                    pred = list(method.answer_batch([ex], 1))[0]
            except GraphError as err:  # no subgraph for this question: it costs only itself
                pred = Prediction(ex.qid, ex.question, [], status=Status.GRAPH_ERROR,
                                  errors=[f"{type(err).__name__}: {err}"])
        yield ex, with_gold(mark_bounds(pred, budget, True), ex)


def mark_bounds(pred: Prediction, budget, alone: bool) -> Prediction:
    """Say in the prediction which work bounds its question hit (`extra["bounds"]`: instances,
    answers, evidence, time), and mark a question whose time ran out `over_budget` (not retried on
    resume: it would run out again). In a batch (`alone` false) a bound noted by the graph layer
    belongs to the question whose topic entity it names."""
    own = list(pred.extra.get("bounds") or [])
    mine = [h for h in budget.hits if alone or any(h.endswith(f"from {t})") for t in pred.topic_entities)]
    ran_out = budget.expired and (alone or any("OverBudgetError" in e for e in pred.errors))
    if ran_out:
        pred.status = Status.OVER_BUDGET
        mine.append(f"time budget of {budget.seconds:g} s used up")
    hits = list(dict.fromkeys(own + mine))
    if hits:
        pred.extra["bounds"] = hits
    return pred


def with_gold(pred: Prediction, ex: QAExample) -> Prediction:
    """Attach what the scoring needs from the dataset (methods never see it): gold answers and
    their labels, the gold relation path and its length."""
    pred.gold_answers = list(ex.answers)
    pred.gold_labels = list(ex.answer_labels)
    pred.gold_aliases = [list(a) for a in ex.answer_ids]
    pred.gold_path = list(ex.gold_path) if ex.gold_path else None
    pred.gold_hop = ex.hops if ex.hops is not None else (len(ex.gold_path) if ex.gold_path else None)
    if "answer_in_subgraph" in ex.extra:  # per-question graphs: what the subgraph allowed
        pred.extra["answer_in_subgraph"] = bool(ex.extra["answer_in_subgraph"])
    pred.extra["gold_shape"] = gold_shape(ex)
    for key in GROUP_FIELDS:  # what the dashboards break the metrics down by (rra.eval.dashboard)
        if ex.extra.get(key) is not None:
            pred.extra.setdefault(key, ex.extra[key])
    return pred


# Fields of a question's `extra` copied into its prediction, for per-group metrics.
GROUP_FIELDS = ("qtype", "question_type", "shape")


def gold_shape(ex: QAExample) -> str:
    """The question's shape as the data says (`shape`, read into `extra["shape"]`), else from its
    plan (rra.plans.plan.question_shape), else by its number of topic entities."""
    from rra.plans.plan import question_shape

    if ex.extra.get("shape"):
        return ex.extra["shape"]
    plan = ex.extra.get("plan")
    if plan:
        return question_shape(plan)
    return "conjunction" if len(set(ex.topic_entities)) > 1 else "chain"


def choices() -> dict:
    """Which option of each config group this run uses (data=builtin, answer=graph, ...)."""
    try:
        from hydra.core.hydra_config import HydraConfig

        return dict(HydraConfig.get().runtime.choices)
    except Exception:  # composed without Hydra's runtime config (plain compose in a script)
        return {}


def resolved_config(cfg: DictConfig) -> dict:
    """The config as it ran (interpolations such as ${data.kb_path} replaced by their values), so
    a dashboard shows which KG file and checkpoint produced a run."""
    try:
        return OmegaConf.to_container(cfg, resolve=True)
    except Exception:  # a key that only resolves inside a Hydra app: resolve what can be
        container = OmegaConf.to_container(cfg, resolve=False)
        for key in ("data", "graph", "retriever", "method", "llm"):
            try:
                container[key] = OmegaConf.to_container(cfg[key], resolve=True)
            except Exception:
                pass
        return container


def log_to_loggers(cfg: DictConfig, metrics: dict, preds: list[dict] = (), summary_path: Path | None = None) -> None:
    """Scalars, plus the dashboards' tables and charts (rra.eval.dashboard, `cfg.dashboard`)."""
    from rra.eval import dashboard

    flat = {f"{cfg.split}/{k}": float(v) for k, v in metrics.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)}
    options = cfg.get("dashboard") or {}
    tables = None
    for name, node in (cfg.get("logger") or {}).items():
        if not node or "_target_" not in node:
            continue
        try:
            logger = instantiate(node)
            logger.log_hyperparams(resolved_config(cfg))
            logger.log_metrics(flat)
            if type(logger).__name__ == "WandbLogger":  # lineage: the model artifact this run used
                from rra.eval.dashboard import record_checkpoint_artifact

                record_checkpoint_artifact(logger.experiment, OmegaConf.select(cfg, "retriever.ckpt", default=None))
            if preds and options.get("tables", True):
                if tables is None:
                    tables = dashboard.build_tables(preds, list(options.get("breakdowns") or ()),
                                                    int(options.get("max_rows", 2000)))
                dashboard.log_tables(logger, tables, summary_path)
            logger.finalize("success")
            if node.get("_target_", "").endswith("WandbLogger"):
                import wandb

                wandb.finish()
        except Exception as err:  # a logger problem must not lose the written results
            log.warning("logger %s failed: %s: %s", name, type(err).__name__, err)


# Errors that are the input's or the setup's, not a bug: infer.py prints their message without a
# traceback (each names the file and line, the key, the directory, or the unreachable store).
INPUT_ERRORS = _input_errors()
