"""Numbers the ShredBench / OrigamiBench paper reports for its models: drawn beside ours in the
report, always labelled as reported (they are not measured by this harness)."""

from __future__ import annotations

SOURCE = "reported in the ShredBench / OrigamiBench paper (not measured here)"

# ShredBench: mean NED at N = 8 / 12 / 16 pieces.
SHRED_NED: dict[str, dict[int, float]] = {
    "Gemini 3 Pro": {8: 0.33, 12: 0.37, 16: 0.41},
    "Gemini 3 Flash": {8: 0.34, 12: 0.40, 16: 0.44},
    "GPT-5 Mini": {8: 0.58, 12: 0.65, 16: 0.73},
    "GPT-5.1": {8: 0.77, 12: 0.81, 16: 0.82},
    "Qwen-VL-Plus": {8: 0.59, 12: 0.63, 16: 0.84},
    "InternVL3.5-38B": {8: 0.74, 12: 0.75, 16: 0.76},
    "Mistral3-Reasoning": {8: 0.77, 12: 0.79, 16: 0.79},
}

# OrigamiBench one-step multiple choice: accuracy by variant.
ORIGAMI_MCQ: dict[str, dict[str, float]] = {
    "Qwen3-VL-32B": {"mcq_assoc": 0.9618, "mcq_causal": 0.4337},
}
