#!/usr/bin/env python3
"""Writes retool_goldens.json from slime's own examples/retool files (generate_with_retool.py,
tool_sandbox.py): the prompt, postprocess_predictions, execute_predictions (which runs slime's
PythonSandbox, so python3 runs each snippet) and reward_func.

    python3 tests/data/retool/make_goldens.py <slime checkout>/examples/retool \
        > tests/data/retool/retool_goldens.json

slime's modules it imports are stubbed (Sample, GenerateState, post, psutil). math_dapo_utils is
not in slime's tree: its strict-box compute_score is re-typed below from verl's math_dapo.py
(the same code vime's rm_hub/dapo reproduces). Needs jinja2. Tracebacks name slime's random temp
dir; it is rewritten to /tmp, where vime's sandbox puts code.py."""
import asyncio
import json
import os
import re
import sys
import types


def stub(name, **attrs):
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module
    return module


class Sample:
    def __init__(self, prompt, response, label, tool_call_count=None):
        self.prompt, self.response, self.label = prompt, response, label
        if tool_call_count is not None:
            self.tool_call_count = tool_call_count


# verl recipe math_dapo.py, strict-box path
def last_boxed_only_string(string):
    idx = string.rfind("\\boxed{")
    if idx < 0:
        return None
    i = idx
    right_brace_idx = None
    num_left_braces_open = 0
    while i < len(string):
        if string[i] == "{":
            num_left_braces_open += 1
        if string[i] == "}":
            num_left_braces_open -= 1
            if num_left_braces_open == 0:
                right_brace_idx = i
                break
        i += 1
    return string[idx : right_brace_idx + 1] if right_brace_idx is not None else None


def remove_boxed(s):
    left = "\\boxed{"
    assert s[: len(left)] == left
    assert s[-1] == "}"
    return s[len(left) : -1]


def is_correct_strict_box(pred, gt, pause_tokens_index=None):
    pred = pred[-100:]
    boxed_pred = last_boxed_only_string(pred)
    extracted_pred = remove_boxed(boxed_pred) if boxed_pred is not None else None
    return 1 if (extracted_pred == gt) else -1, extracted_pred


def compute_score(solution_str, ground_truth, strict_box_verify=False, pause_tokens_index=None):
    assert strict_box_verify
    solution_str = solution_str[-300:]
    correct, pred = is_correct_strict_box(solution_str, ground_truth, pause_tokens_index)
    correct = correct == 1
    return {"score": 1.0 if correct else -1.0, "acc": correct, "pred": pred}


stub("psutil", Process=lambda: None)
stub("slime")
stub("slime.rollout")
stub("slime.rollout.sglang_rollout", GenerateState=object)
stub("slime.utils")
stub("slime.utils.http_utils", post=None)
stub("slime.utils.types", Sample=Sample)
stub("slime.rollout.rm_hub")
stub("slime.rollout.rm_hub.math_dapo_utils", compute_score=compute_score)
sys.path.insert(0, sys.argv[1])
import tool_sandbox  # noqa: E402

tool_sandbox.check_and_cleanup_memory = lambda: None
tool_sandbox.get_memory_usage = lambda: 0.0
import generate_with_retool as g  # noqa: E402

PREDICTIONS = [
    "Answer: \\boxed{42}",
    "So the answer is\nAnswer:   \\boxed{ \\frac{1}{2} }",
    "Answer: \\boxed{a{b}c}",
    "Answer: \\boxed{a{b{c}}}",
    "Let me compute.\n<code>\nprint(6*7)\n</code>\nwait",
    "<code>a</code> then <code>b</code>",
    "<code></code>",
    "<code>   \n </code>",
    "<code>\u3000print(1)\u00a0</code>",
    "<code>print(1)</code> and Answer: \\boxed{1}",
    "```python\nprint(3)\n```",
    "```python print(4)```",
    "<code>x</code> ```python\nprint(5)\n```",
    '<tool_call>{"name": "code_interpreter", "arguments": {"code": "print(1)\nprint(2)"}}</tool_call>',
    '<tool_call>\n{"name": "code_interpreter", "arguments": {"code": "print(1)"}}\n</tool_call>',
    '<tool_call>\n{\n"name": "code_interpreter", "arguments": {"code": "print(7)"}}\n</tool_call>',
    '<tool_call>{"name": "code_interpreter", "arguments": {"code": "  print(8)  "}}</tool_call>',
    '<tool_call>{"name": "code_interpreter", "arguments": {"code": "   "}}</tool_call><code>print(9)</code>',
    '<tool_call>{"name": "search", "arguments": {"code": "print(1)"}}</tool_call>',
    '<tool_call>{"name": "code_interpreter", "arguments": "print(1)"}</tool_call>',
    '<tool_call>{"name": "code_interpreter", "arguments": {"code": 5}}</tool_call>',
    '<tool_call>["code_interpreter"]</tool_call>',
    '<tool_call>{"name": "code_interpreter"}</tool_call>',
    '<tool_call>{bad json}</tool_call>',
    "nothing to do here",
    "",
    "<code>unterminated",
    "Answer: \\boxed{unterminated",
    "answer: \\boxed{7}",
]

SNIPPETS = [
    "<code>print(6*7)</code>",
    "<code>\nx = 3\nprint(x * x)\nprint('done')\n</code>",
    "<code>x = 1</code>",
    "<code>print('  padded  ')\n</code>",
    "<code>print('out')\nprint('err', file=sys.stderr)</code>",
    "<code>print('only err', file=sys.stderr)</code>",
    "<code>s = '''a\nb'''\nprint(s)</code>",
    "<code>print(sorted({3, 1, 2}))\nimport math\nprint(math.sqrt(2))</code>",
    "<code>x = 1/0</code>",
    "<code>print(</code>",
    "<code>  print(1)</code>",
    "<code>import os\nprint(1)</code>",
    "<code>import numpy as np</code>",
    "<code>from math import sqrt\nprint(sqrt(4))</code>",
    "<code>open('/etc/passwd')</code>",
    "<code>print(type(1))</code>",
    "<code>print(x.__class__)</code>",
    "<code>IMPORT OS</code>",
    "<code></code>",
    "<code>  </code>",
    "Answer: \\boxed{42}",
    "I will just think.",
    "```python\nprint(2**10)\n```",
    '<tool_call>{"name": "code_interpreter", "arguments": {"code": "print(11)"}}</tool_call>',
]

REWARDS = [
    # (response, label, tool_call_count or None)
    ("Answer: \\boxed{42}", "42", 3),
    ("Answer: \\boxed{42}", "42", None),
    ("Answer: \\boxed{41}", "42", 0),
    ("Answer: \\boxed{41}", "42", 1),
    ("Answer: \\boxed{41}", "42", 2),
    ("Answer: \\boxed{41}", "42", 3),
    ("Answer: \\boxed{41}", "42", 4),
    ("Answer: \\boxed{41}", "42", 5),
    ("Answer: \\boxed{41}", "42", 6),
    ("Answer: \\boxed{41}", "42", 7),
    ("Answer: \\boxed{41}", "42", 10),
    ("Answer: \\boxed{41}", "42", 16),
    ("no box at all", "42", 2),
    ("no box at all", "42", None),
    ("\\boxed{42}" + "x" * 120, "42", 1),
    ("\\boxed{42}" + "x" * 90, "42", 1),
    ("\\boxed{ 42 }", "42", 0),
    ("\\boxed{42", "42", 0),
    ("\\boxed{\\frac{1}{2}}", "\\frac{1}{2}", 0),
    ("first \\boxed{42} then \\boxed{43}", "42", 8),
    ("<interpreter>\nOutput:\n42\n</interpreter>\n\nAnswer: \\boxed{42}", "42", 1),
    ("Answer: \\boxed{}", "", 0),
    ("Answer: \\boxed{42}", "", 0),
]


async def main():
    tools = g.tool_registry.get_tool_specs()
    out = {
        "python": sys.version.split()[0],
        "prompts": [
            {"user": u, "text": g.format_conversation_with_tools(prompt=u, tools=tools)}
            for u in ["What is 6*7?", "", "line one\nline two {{ not jinja }}"]
        ],
        "predictions": [],
        "observations": [],
        "rewards": [],
    }
    for p in PREDICTIONS:
        action, content = g.postprocess_predictions(p)
        out["predictions"].append({"text": p, "action": action, "content": content})
    for s in SNIPPETS:
        obs, done = await g.execute_predictions(s)
        obs = re.sub(r"/tmp/python_sandbox_[A-Za-z0-9_]+/", "/tmp/", obs)
        out["observations"].append({"text": s, "observation": obs, "done": done})
    for response, label, count in REWARDS:
        sample = Sample("PROMPT ", response, label, count)
        r = await g.reward_func(None, sample)
        out["rewards"].append(
            {"response": response, "label": label, "tool_call_count": count, "result": r}
        )
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


asyncio.run(main())
