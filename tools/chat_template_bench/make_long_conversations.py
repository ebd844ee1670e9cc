#!/usr/bin/python3
"""40 long conversations (a system prompt, 4 user turns of ~800 words, 4 assistant turns with
<think> blocks), fixed seed, in the goldens' line format (without "text"), for run.sh.
Usage: make_long_conversations.py OUT.jsonl"""
import json
import random
import sys

WORDS = "the quick brown fox jumps over a lazy dog while 17 * 23 = 391 and naïve café 你好".split()


def words(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def main():
    rng = random.Random(0)
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        for _ in range(40):
            messages = [{"role": "system", "content": words(rng, 300)}]
            for _ in range(4):
                messages.append({"role": "user", "content": words(rng, 800)})
                messages.append({"role": "assistant",
                                 "content": "<think>\n" + words(rng, 400) + "\n</think>\n\n" + words(rng, 600)})
            out.write(json.dumps({"messages": messages, "tools": None, "add_generation_prompt": True,
                                  "kwargs": {}, "text": ""}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
