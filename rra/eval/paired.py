"""Is run B better than run A on the same questions? A paired comparison of two predictions files.

    python -m rra.eval.paired A/predictions.jsonl B/predictions.jsonl
    python -m rra.eval.paired A_seed42,A_seed1,A_seed2 B_seed42,B_seed1,B_seed2   (trainings paired by seed)
    python -m rra.eval.compare RUNS ... --out DIR --baseline LABEL   (every run against one)

Two runs answered the same test questions, so their Hits@1 differ only where one got a question
right and the other wrong. The comparison counts those questions (won / lost), and gives a 95%
interval for the difference by resampling questions (a bootstrap; each resample draws how many
won, lost and tied questions it holds, which is the same as drawing questions) and the sign test's
p-value over the questions that differ (McNemar's exact test).

What it does not cover: a second training with another seed moves a figure too (by about two
points on the DBpedia-shaped KG, docs/results.md), and questions written from one template fail
together, so the interval is narrower than the spread between trainings. Compare trainings of
several seeds for that: given comma-separated runs, each of A's is paired with B's in the same place
(the same seed), and the trainings' differences are summed up beside each pair's.
"""
from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np

from rra.cli import run_command
from rra.eval.metrics import hit_at_1
from rra.eval.report import PREDICTIONS, read_predictions


def _keyed(predictions: list[dict], where: str) -> dict[str, dict]:
    """Predictions by question id (the question's text where a row has no id); a question answered
    twice (a resumed run) counts once, by its last row."""
    out = {}
    for i, p in enumerate(predictions):
        key = p.get("qid") or p.get("question")
        if not key:
            raise ValueError(f"{where}: row {i + 1} has neither a qid nor a question to pair it by")
        out[str(key)] = p
    return out


def read_run(path: str | Path) -> list[dict]:
    """A run's predictions: its predictions.jsonl, or the run folder that holds it."""
    p = Path(path)
    p = p / PREDICTIONS if p.is_dir() else p
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such predictions file (a paired comparison reads each run's {PREDICTIONS})")
    return read_predictions(p)


def sign_test(won: int, lost: int) -> float:
    """Two-sided exact p-value that questions won and lost are equally likely (McNemar's test)."""
    m, k = won + lost, min(won, lost)
    if m == 0:
        return 1.0
    log_half = m * math.log(0.5)
    tail = sum(math.exp(math.lgamma(m + 1) - math.lgamma(i + 1) - math.lgamma(m - i + 1) + log_half)
               for i in range(k + 1))
    return min(1.0, 2 * tail)


def paired_difference(a: list[dict], b: list[dict], metric: Callable[[dict], bool] = hit_at_1,
                      resamples: int = 10_000, seed: int = 0, names: tuple[str, str] = ("A", "B")) -> dict:
    """B's score less A's on the questions both answered, in points (0-100): the two scores, the
    difference with its bootstrap 95% interval, questions won / lost / tied, the sign test's
    p-value, and how many questions only one of them answered (left out)."""
    ka, kb = _keyed(a, names[0]), _keyed(b, names[1])
    shared = [q for q in ka if q in kb]
    if not shared:
        raise ValueError(f"{names[0]} and {names[1]} share no question (qid): nothing to compare")
    ha = np.array([bool(metric(ka[q])) for q in shared])
    hb = np.array([bool(metric(kb[q])) for q in shared])
    n = len(shared)
    won, lost = int((hb & ~ha).sum()), int((ha & ~hb).sum())
    counts = np.random.default_rng(seed).multinomial(n, [won / n, lost / n, (n - won - lost) / n], size=resamples)
    diffs = 100.0 * (counts[:, 0] - counts[:, 1]) / n
    low, high = np.percentile(diffs, [2.5, 97.5])
    return {"n": n, "a": round(100.0 * ha.mean(), 2), "b": round(100.0 * hb.mean(), 2),
            "difference": round(100.0 * (won - lost) / n, 2), "ci95": [round(float(low), 2), round(float(high), 2)],
            "won": won, "lost": lost, "tied": n - won - lost, "p_sign_test": round(sign_test(won, lost), 4),
            "only_a": len(ka) - n, "only_b": len(kb) - n}


def describe(d: dict, a: str = "A", b: str = "B") -> str:
    """One line: "B against A: +0.57 points (96.70 -> 97.27; 95% CI -0.68 to +1.82), 17 won / 12 lost of 880,
    sign test p 0.458"."""
    left = f"; {d['only_a']} only in {a}, {d['only_b']} only in {b} (left out)" if d["only_a"] or d["only_b"] else ""
    return (f"{b} against {a}: {d['difference']:+.2f} points ({d['a']:.2f} -> {d['b']:.2f}; 95% CI "
            f"{d['ci95'][0]:+.2f} to {d['ci95'][1]:+.2f}), {d['won']} won / {d['lost']} lost of {d['n']}, "
            f"sign test p {d['p_sign_test']:.3g}{left}")


def over_trainings(pairs: list[dict]) -> dict:
    """Several trainings' paired differences (one per seed) summed up: their mean, the lowest and
    highest, and questions won and lost over all of them."""
    diffs = [p["difference"] for p in pairs]
    return {"trainings": len(pairs), "mean_difference": round(sum(diffs) / len(diffs), 2),
            "lowest": min(diffs), "highest": max(diffs), "won": sum(p["won"] for p in pairs),
            "lost": sum(p["lost"] for p in pairs), "better_in": sum(d > 0 for d in diffs),
            "worse_in": sum(d < 0 for d in diffs)}


def describe_trainings(d: dict) -> str:
    return (f"over {d['trainings']} trainings: {d['mean_difference']:+.2f} points on average (from {d['lowest']:+.2f} "
            f"to {d['highest']:+.2f}), better in {d['better_in']}, worse in {d['worse_in']}; {d['won']} won / {d['lost']} lost")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", help="the baseline's predictions.jsonl or run folder (several, comma-separated: one per seed)")
    ap.add_argument("b", help="the other run's, as many as the baseline's, in the same order of seeds")
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    def command() -> None:
        # a path that exists is one run even where its name holds a comma (a sweep's "method=tog,llm=none")
        a_runs, b_runs = ([x] if Path(x).exists() else x.split(",") for x in (args.a, args.b))
        if len(a_runs) != len(b_runs):
            raise ValueError(f"{len(a_runs)} baseline run(s) against {len(b_runs)}: give one of each per seed, in the same order")
        pairs = []
        for a, b in zip(a_runs, b_runs):
            pairs.append(paired_difference(read_run(a), read_run(b), resamples=args.resamples, seed=args.seed, names=(a, b)))
            print(describe(pairs[-1], a, b))
        if len(pairs) > 1:
            print(describe_trainings(over_trainings(pairs)))

    return run_command("paired", command, (FileNotFoundError, ValueError))


if __name__ == "__main__":
    raise SystemExit(main())
