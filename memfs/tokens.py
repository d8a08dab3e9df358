"""Token estimates for budgets.

Budgets only need to be about right and the same everywhere, and a real tokenizer would
tie memfs to one model family; four characters per token is the usual estimate for
English with Anthropic and OpenAI tokenizers.
"""

from __future__ import annotations

import math


def count_tokens(text: str) -> int:
    return math.ceil(len(text) / 4) if text else 0
