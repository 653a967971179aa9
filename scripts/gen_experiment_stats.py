#!/usr/bin/env python3
"""Generate fixtures/experiments/sequential.jsonl: what GrowthBook's own stats engine says of a
step experiment, so nudge's always-valid test (`src/experiment/stats.rs`) is checked against an
independent implementation. The oracle is `gbstats` (pinned in scripts/requirements-stats.txt:
gbstats==0.8.0 with numpy<2 and pandas<2, which it needs).

Two kinds of line:
- {"kind": "sequential", "control": [n, x], "variant": [n, x], "alpha", "tuning",
   "difference", "ci_low", "ci_high", "p_value"}: gbstats' `SequentialTwoSidedTTest` on two
   `ProportionStatistic`s with `difference_type="absolute"` (its `point_estimate`,
   `confidence_interval` and `p_value`); lines where gbstats finds no variance are left out.
- {"kind": "sample_ratio", "exposed": [...], "weights": [...], "p_value"}: `gbstats.utils.check_srm`.

Counts are drawn with a fixed seed: small and large samples, rates near 0 and near 1, equal and
uneven arms, several alphas and tunings, and the published reference point (A 50/1000, B
80/1000, alpha 0.05, tuning 5000).
Usage: python3 -m venv /tmp/gbstats && /tmp/gbstats/bin/pip install -r scripts/requirements-stats.txt &&
/tmp/gbstats/bin/python scripts/gen_experiment_stats.py
"""

import json
import os
import random

from gbstats.frequentist.tests import SequentialConfig, SequentialTwoSidedTTest
from gbstats.models.statistics import ProportionStatistic
from gbstats.utils import check_srm

OUT = os.path.join(os.path.dirname(__file__), "..", "fixtures", "experiments", "sequential.jsonl")


def sequential(control, variant, alpha, tuning):
    test = SequentialTwoSidedTTest(
        ProportionStatistic(sum=control[1], n=control[0]),
        ProportionStatistic(sum=variant[1], n=variant[0]),
        SequentialConfig(alpha=alpha, sequential_tuning_parameter=tuning, difference_type="absolute"),
    )
    if test.variance <= 0:
        return None
    low, high = test.confidence_interval
    return {
        "kind": "sequential",
        "control": list(control),
        "variant": list(variant),
        "alpha": alpha,
        "tuning": tuning,
        "difference": float(test.point_estimate),
        "ci_low": float(low),
        "ci_high": float(high),
        "p_value": float(test.p_value),
    }


def main():
    rng = random.Random(20261205)
    lines = [sequential((1000, 50), (1000, 80), 0.05, 5000)]
    sizes = [1, 2, 5, 30, 31, 100, 250, 1000, 4_999, 10_000, 123_457, 1_000_000]
    rates = [0.0, 0.001, 0.01, 0.05, 0.1, 0.3, 0.5, 0.9, 0.999, 1.0]
    while len(lines) < 600:
        na, nb = rng.choice(sizes), rng.choice(sizes)
        if rng.random() < 0.5:
            nb = na
        ra, rb = rng.choice(rates), rng.choice(rates)
        if rng.random() < 0.3:
            rb = min(1.0, max(0.0, ra + rng.uniform(-0.05, 0.05)))
        control = (na, round(na * ra))
        variant = (nb, round(nb * rb))
        alpha = rng.choice([0.05, 0.05, 0.01, 0.1, 0.025])
        tuning = rng.choice([5000, 5000, 1000, 20000])
        line = sequential(control, variant, alpha, tuning)
        if line is not None:
            lines.append(line)
    weight_sets = [[1, 1], [1, 2], [1, 1, 1], [0.5, 0.25, 0.25], [3, 1, 1, 5], [1, 0, 1]]
    for i in range(200):
        weights = rng.choice(weight_sets)
        total = rng.choice([0, 10, 100, 1000, 10_000, 250_000])
        share = sum(weights)
        exposed = [
            max(0, round(total * w / share * rng.uniform(0.9, 1.1))) if w > 0 else rng.choice([0, 3])
            for w in weights
        ]
        lines.append(
            {
                "kind": "sample_ratio",
                "exposed": exposed,
                "weights": weights,
                "p_value": float(check_srm(exposed, weights)),
            }
        )
    with open(OUT, "w") as f:
        for line in lines:
            f.write(json.dumps(line, sort_keys=True) + "\n")
    print(f"{len(lines)} lines to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
