#!/usr/bin/python3
"""transformers' Jinja setup (as in scripts/goldens/make_chat_template_goldens.py) on the same inputs
as bench.cpp: prints "python renders/s output-MB/s checksum". Run with /usr/bin/python3 (Debian
python3-jinja2). Usage: py_bench.py TOKENIZER_DIR GOLDENS.jsonl [PASSES]"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "goldens"))
from make_chat_template_goldens import compile_template, special_tokens_map  # noqa: E402


def main():
    with open(os.path.join(sys.argv[1], "tokenizer_config.json"), encoding="utf-8") as f:
        config = json.load(f)
    template = compile_template(config["chat_template"])
    tokens = special_tokens_map(config)
    requests = [g for g in map(json.loads, open(sys.argv[2], encoding="utf-8")) if "text" in g]
    passes = int(sys.argv[3]) if len(sys.argv) > 3 else 20

    def render(g):
        return template.render(messages=g["messages"], tools=g["tools"], documents=None,
                               add_generation_prompt=g["add_generation_prompt"], **{**tokens, **g["kwargs"]})

    size = sum(len(render(g).encode()) for g in requests)
    start = time.perf_counter()
    total = 0
    for _ in range(passes):
        for g in requests:
            total += len(render(g).encode())
    seconds = time.perf_counter() - start
    print(f"python {len(requests) * passes / seconds:.1f} {total / seconds / 1e6:.2f} {size}")


if __name__ == "__main__":
    main()
