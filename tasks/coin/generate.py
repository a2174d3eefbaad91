"""Write coin.jsonl: 60 tasks whose outcome per arm is drawn once, with a chance per arm.

``baseline`` passes a task with chance 0.3, ``with_skill`` with 0.8, and ``baseline_twin`` (the
A/A twin of baseline) with 0.3 again, independently. Run: ``python tasks/coin/generate.py``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

CHANCES = {"baseline": 0.3, "with_skill": 0.8, "baseline_twin": 0.3}
TASKS = 60
SEED = 60


def rows(seed: int = SEED) -> list[dict[str, str]]:
    rng = random.Random(seed)
    made = []
    for i in range(TASKS):
        drawn = {arm: "pass" if rng.random() < chance else "fail" for arm, chance in CHANCES.items()}
        made.append({"id": f"t{i:02d}", "outcomes": " ".join(f"{a}={o}" for a, o in drawn.items())})
    return made


if __name__ == "__main__":
    out = Path(__file__).with_name("coin.jsonl")
    out.write_text("".join(json.dumps(row) + "\n" for row in rows()), encoding="utf-8")
