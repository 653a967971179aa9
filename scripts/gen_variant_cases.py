#!/usr/bin/env python3
"""Generate fixtures/experiments/assignment.jsonl: which variant GrowthBook itself gives a
contact, so nudge's step-variant assignment (`src/experiment/assign.rs`) is checked against an
independent implementation. The oracle is the `growthbook` package (pinned: growthbook==4.0.0,
MIT; its `fnv1a32` walks UTF-16 code units like the JavaScript SDK, and its hashing and bucket
ranges are the SDKs' shared conformance behaviour).

Each line: {"seed", "contact_id", "weights", "bucket", "variant"} where
- `bucket` is `gbhash(seed, contact_id, 2)`: fnv1a32(str(fnv1a32(seed + contact_id))) % 10000 / 10000;
- `variant` is `chooseVariation(bucket, getBucketRanges(len(weights), 1, normalised weights))`,
  the weights normalised as nudge does (each divided by their sum).

Seeds are nudge's (`"<flow name>/<step id>:"` or `"<experiment name>:"`), contact ids are
generated with a fixed seed (ASCII ids, emails, accented, CJK, and characters outside the Basic
Multilingual Plane, which are two UTF-16 code units), weights are equal, uneven and many.
Usage: python3 -m venv /tmp/gb && /tmp/gb/bin/pip install growthbook==4.0.0 &&
/tmp/gb/bin/python scripts/gen_variant_cases.py
"""

import json
import os
import random

from growthbook.core import chooseVariation, gbhash, getBucketRanges

SEEDS = [
    "welcome/email_1:",
    "welcome/sms_2:",
    "Q3 outbound — EMEA/intro:",
    "subject-lines-2027:",
    "Überraschung/schritt_1:",
    "欢迎/第一步:",
]
WEIGHTS = [
    [1, 1],
    [1, 2],
    [1, 1, 1],
    [0.5, 0.25, 0.25],
    [3, 1, 1, 5],
    [1, 1, 1, 1, 1, 1, 1],
    [0.1, 0.9],
    [7, 13],
]
ALPHABETS = [
    "abcdefghijklmnopqrstuvwxyz0123456789_-",
    "éèêëàâäôöûüçñÿœæ",
    "中文字符测试联系人",
    "😀🚀🎉𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
]


def contact_ids(rng):
    ids = ["ann", "ct_01HZX", "ann@example.com", "+13035551234", "0", "a" * 128]
    for _ in range(60):
        alphabet = rng.choice(ALPHABETS[:1] * 3 + ALPHABETS)
        ids.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 24))))
    for i in range(40):
        ids.append(f"contact-{i:05d}@example.com")
    return ids


def main():
    rng = random.Random(20261205)
    ids = contact_ids(rng)
    here = os.path.dirname(os.path.abspath(__file__))
    out = os.path.join(here, "..", "fixtures", "experiments", "assignment.jsonl")
    n = 0
    with open(out, "w", encoding="utf-8") as f:
        for seed in SEEDS:
            for weights in WEIGHTS:
                for contact in rng.sample(ids, 25):
                    total = sum(weights)
                    normalised = [w / total for w in weights]
                    bucket = gbhash(seed, contact, 2)
                    variant = chooseVariation(bucket, getBucketRanges(len(weights), 1, normalised))
                    line = {
                        "seed": seed,
                        "contact_id": contact,
                        "weights": weights,
                        "bucket": bucket,
                        "variant": variant,
                    }
                    f.write(json.dumps(line, ensure_ascii=False) + "\n")
                    n += 1
    print(f"wrote {n} cases to {os.path.normpath(out)}")


if __name__ == "__main__":
    main()
