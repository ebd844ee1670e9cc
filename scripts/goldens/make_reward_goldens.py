#!/usr/bin/env python3
"""Makes the reward-model goldens in tests/data/reward_goldens/ by running slime's own graders.

slime's code is not in this repository. To regenerate:
  1. Put slime's graders in one directory (here called SLIME_RM), as plain modules:
       math_utils.py, math_dapo_utils.py, deepscaler.py, gpqa.py   from THUDM/slime slime/rollout/rm_hub/
       f1.py                                                       (slime's f1.py, HotpotQA's f1_score)
     In deepscaler.py change `from .math_utils import` to `from math_utils import` (no package here).
     (math_dapo_utils.compute_score must return {"score", "acc", "pred"}, as slime's rm_hub expects.)
  2. apt-get install -y python3-sympy python3-pylatexenc     # Debian 12: sympy 1.11, pylatexenc 2.10
  3. /usr/bin/python3 scripts/goldens/make_reward_goldens.py SLIME_RM tests/data/reward_goldens
     (Debian's python, not a pyenv/venv python3 that lacks those packages.)

Each output file <grader>.jsonl holds one object per line: {"response", "label", "metadata"?, "reward"},
the input of `vime reward --rm-type <grader>` plus slime's answer. The pairs are generated
deterministically (fixed seed) from the answer forms below.
"""
import itertools
import json
import os
import random
import sys

if len(sys.argv) != 3:
    sys.exit(__doc__)
sys.path.insert(0, sys.argv[1])
OUT = sys.argv[2]

import math_utils  # noqa: E402
import math_dapo_utils  # noqa: E402
import deepscaler  # noqa: E402
import f1  # noqa: E402
import gpqa  # noqa: E402

rng = random.Random(20261123)

# (ground truth, answers to try against it): equivalent forms first, then near misses.
MATH_CASES = [
    ("42", ["42", "42.0", "042", "41", "4 2", "\\text{42}", "42 \\text{ cm}", "x = 42", "42^\\circ", "42.", "42,000", "-42", "\\frac{84}{2}", "6 \\cdot 7", "40+2"]),
    ("\\frac{1}{2}", ["\\frac12", "\\dfrac{1}{2}", "\\tfrac{1}{2}", "0.5", ".5", "1/2", "\\frac{2}{4}", "2/4", "0.50", "\\frac{1}{3}", "\\frac{-1}{2}", "-0.5", "50\\%", "\\frac {1} {2}", "\\left(\\frac{1}{2}\\right)"]),
    ("-\\frac{3}{4}", ["-\\frac{3}{4}", "-3/4", "\\frac{-3}{4}", "-0.75", "\\frac{3}{-4}", "-\\dfrac{3}{4}", "\\frac{3}{4}", "- \\frac{3}{4}", "-\\frac{6}{8}", "-.75"]),
    ("\\sqrt{2}", ["\\sqrt2", "\\sqrt{2}", "2^{1/2}", "\\sqrt{4}/\\sqrt{2}", "1.41421356", "\\frac{2}{\\sqrt{2}}", "\\sqrt{3}", "\\sqrt 2", "2^(1/2)", "sqrt(2)"]),
    ("2\\sqrt{3}", ["2\\sqrt{3}", "\\sqrt{12}", "2 \\sqrt{3}", "2\\sqrt3", "\\sqrt{3}\\cdot 2", "3\\sqrt{2}", "2*\\sqrt{3}", "\\frac{6}{\\sqrt{3}}", "4\\sqrt{3}/2"]),
    ("\\frac{\\sqrt{3}}{2}", ["\\frac{\\sqrt{3}}{2}", "\\frac{\\sqrt3}{2}", "\\sqrt{3}/2", "\\frac{1}{2}\\sqrt{3}", "\\frac{3}{2\\sqrt{3}}", "0.866", "\\frac{\\sqrt{2}}{2}", "\\sqrt{\\frac{3}{4}}"]),
    ("\\pi", ["\\pi", "pi", "3.14159", "\\frac{2\\pi}{2}", "\\pi r", "2\\pi", "180^\\circ"]),
    ("3\\pi", ["3\\pi", "3 \\pi", "\\pi \\cdot 3", "\\frac{6\\pi}{2}", "9.42", "3\\pi^2", "\\pi+2\\pi"]),
    ("\\frac{\\pi}{4}", ["\\frac{\\pi}{4}", "\\pi/4", "\\frac{1}{4}\\pi", "0.25\\pi", "45^\\circ", "\\frac{\\pi}{2}", "\\frac{2\\pi}{8}"]),
    ("12", ["12", "12.00", "12 \\text{ inches}", "12 inches", "12 cm", "12 \\text{ cm}^2", "12\\%", "12 units", "\\$12", "\\boxed{12}", "12 \\mbox{ cm}", "12 meters", "twelve", "12.5", "11.9999999999"]),
    ("1000000", ["1000000", "1,000,000", "1 million", "10^6", "1000000.0", "1,000,001", "1e6", "10^{6}"]),
    ("25\\%", ["25\\%", "25", "25%", "0.25", "\\frac{1}{4}", "25 percent", "26\\%"]),
    ("(1,2)", ["(1,2)", "(1, 2)", "\\left(1,2\\right)", "(2,1)", "[1,2]", "(1,2,3)", "1,2", "(1.0,2)", "(\\frac{2}{2},2)"]),
    ("(-\\infty, 3)", ["(-\\infty, 3)", "(-\\infty,3)", "(-\\infty, 3]", "x < 3", "(-\\infty,3.0)", "(-inf, 3)"]),
    ("[0, \\frac{1}{2}]", ["[0, \\frac{1}{2}]", "[0,1/2]", "[0, 0.5]", "(0, \\frac{1}{2})", "[0,\\frac12]", "[0, \\frac{2}{4}]"]),
    ("x+1", ["x+1", "1+x", "x + 1", "(x+1)", "x+2", "\\frac{2x+2}{2}", "x+1.0", "X+1", "y+1"]),
    ("x^2-1", ["x^2-1", "(x-1)(x+1)", "(x+1)(x-1)", "-1+x^2", "x^{2}-1", "x^2+1", "x*x-1"]),
    ("2x+3y", ["2x+3y", "3y+2x", "2*x+3*y", "x+x+3y", "2x+3z", "y+2x+2y"]),
    ("\\frac{x}{2}", ["\\frac{x}{2}", "x/2", "0.5x", "\\frac12 x", "\\frac{2x}{4}", "\\frac{x}{3}"]),
    ("a^2+b^2", ["a^2+b^2", "b^2+a^2", "a^{2}+b^{2}", "(a+b)^2-2ab", "a^2-b^2"]),
    ("\\text{Monday}", ["\\text{Monday}", "Monday", "monday", "Mon", "\\text{Mon}", "Tuesday", "MONDAY"]),
    ("\\text{(C)}", ["\\text{(C)}", "(C)", "C", "\\text{C}", "(c)", "D", "\\textbf{(C)}"]),
    ("B", ["B", "b", "(B)", "\\text{B}", "\\mathrm{B}", "A", "\\textbf{B}"]),
    ("yes", ["yes", "Yes", "YES", "\\text{yes}", "no", "y"]),
    ("3, 5", ["3, 5", "3,5", "5, 3", "3 and 5", "3 or 5", "\\{3,5\\}", "3"]),
    ("0.3", ["0.3", ".3", "\\frac{3}{10}", "3/10", "0.30", "0.33", "30\\%"]),
    ("1.5", ["1.5", "\\frac{3}{2}", "3/2", "1\\frac{1}{2}", "1 \\frac{1}{2}", "1.50", "1.05"]),
    ("7\\frac{3}{4}", ["7\\frac{3}{4}", "7 \\frac{3}{4}", "\\frac{31}{4}", "7.75", "7 3/4", "31/4", "7\\frac{1}{4}"]),
    ("10^{10}", ["10^{10}", "10^10", "10000000000", "1e10", "10^{9}"]),
    ("2^{10}", ["2^{10}", "1024", "2^10", "4^5", "2^{9}"]),
    ("90^\\circ", ["90^\\circ", "90", "90^{\\circ}", "90 degrees", "\\frac{\\pi}{2}", "89^\\circ"]),
    ("5 \\text{ cm}", ["5 \\text{ cm}", "5", "5cm", "5 cm", "5\\text{cm}", "6 \\text{ cm}"]),
    ("\\$18.90", ["\\$18.90", "18.90", "18.9", "\\$ 18.90", "18.95", "$18.90"]),
    ("-5", ["-5", "- 5", "-5.0", "5", "-\\frac{10}{2}", "(-5)", "-05"]),
    ("0", ["0", "0.0", "-0", "\\frac{0}{1}", "zero", "1-1", "00"]),
    ("\\infty", ["\\infty", "inf", "\\infinity", "-\\infty", "\\infty."]),
    ("\\frac{1}{6}", ["\\frac16", "1/6", "\\frac{1}{6}", "0.1667", "\\frac{2}{12}", "\\frac{16}{96}", "\\dfrac16"]),
    ("\\frac{5}{3}", ["\\frac{5}{3}", "5/3", "1\\frac{2}{3}", "\\frac{10}{6}", "1.67", "\\frac{3}{5}"]),
    ("\\sqrt{5}-1", ["\\sqrt{5}-1", "-1+\\sqrt{5}", "\\sqrt5-1", "1.236", "\\sqrt{5}+1", "\\frac{4}{\\sqrt{5}+1}"]),
    ("\\frac{1+\\sqrt{5}}{2}", ["\\frac{1+\\sqrt{5}}{2}", "\\frac{\\sqrt{5}+1}{2}", "(1+\\sqrt5)/2", "\\frac{1}{2}+\\frac{\\sqrt{5}}{2}", "1.618", "\\frac{1-\\sqrt{5}}{2}"]),
    ("2, -3", ["2, -3", "-3, 2", "2,-3", "x=2, x=-3", "2 \\text{ and } -3", "(2,-3)"]),
    ("\\{1, 2, 3\\}", ["\\{1, 2, 3\\}", "\\{1,2,3\\}", "1, 2, 3", "\\{3,2,1\\}", "{1,2,3}"]),
    ("4\\sqrt{2}", ["4\\sqrt{2}", "\\sqrt{32}", "4\\sqrt2", "2\\sqrt{8}", "5.657", "\\sqrt{2}\\cdot4", "4 \\sqrt {2}"]),
    ("\\frac{9}{2}", ["4.5", "9/2", "\\frac{9}{2}", "4\\frac{1}{2}", "\\frac{18}{4}", "\\frac92", "4.50"]),
    ("y = 2x + 1", ["y = 2x + 1", "y=2x+1", "2x+1", "y = 1 + 2x", "y=2x-1", "f(x)=2x+1"]),
    ("6 \\text{ hours}", ["6", "6 hours", "6 \\text{ hours}", "6 hour", "6\\text{ h}", "360 minutes"]),
    ("120", ["120", "120^\\circ", "120 \\text{ days}", "120 days", "5!", "120.0001", "1.2\\times 10^2", "1.2 \\cdot 10^2"]),
    ("3.14", ["3.14", "\\pi", "3.140", "314/100", "\\frac{157}{50}", "3.1"]),
    ("2", ["2", "\\sqrt{4}", "\\frac{4}{2}", "2.0000001", "2.00", "two", "\\log_2 4", "e^{\\ln 2}", "|{-2}|"]),
]

RESPONSE_TEMPLATES = [
    "The answer is $\\boxed{ANS}$.",
    "Let me compute step by step.\nSo we get \\boxed{ANS}",
    "\\boxed{0} was wrong; final answer: \\boxed{ANS}",
    "Therefore, the final answer is \\boxed{ANS}. I hope it is correct.",
    "Answer: \\fbox{ANS}",
    "ANS",
    "The answer is \\boxed{ANS",
    "<think>hmm \\boxed{7}</think> so \\boxed{ANS}",
]


def math_pairs():
    pairs = []
    for gt, answers in MATH_CASES:
        for ans in answers:
            template = RESPONSE_TEMPLATES[0] if rng.random() < 0.55 else rng.choice(RESPONSE_TEMPLATES)
            label = gt
            r = rng.random()
            if r < 0.08:
                label = "\\boxed{" + gt + "}"
            elif r < 0.12 and gt.lstrip("-").isdigit():
                label = int(gt)
            pairs.append({"response": template.replace("ANS", ans), "label": label})
    # Cross pairs: every answer against a random other ground truth (mostly wrong, some coincidences).
    gts = [gt for gt, _ in MATH_CASES]
    for gt, answers in MATH_CASES:
        for ans in rng.sample(answers, min(3, len(answers))):
            other = rng.choice(gts)
            pairs.append({"response": RESPONSE_TEMPLATES[0].replace("ANS", ans), "label": other})
    # Labels as JSON numbers: slime grades str(label), and a falsy label (0, "") never matches.
    for resp, label in [("\\boxed{0.5}", 0.5), ("\\boxed{\\frac{1}{2}}", 0.5), ("\\boxed{2}", 2.0),
                        ("\\boxed{2.0}", 2.0), ("\\boxed{0}", 0), ("\\boxed{0}", 0.0), ("\\boxed{10^{16}}", 1e16),
                        ("\\boxed{1e+16}", 1e16), ("\\boxed{-3}", -3), ("\\boxed{0.1}", 0.1), ("\\boxed{True}", True),
                        ("\\boxed{1}", True), ("\\boxed{1234567.5}", 1234567.5), ("\\boxed{1e-05}", 0.00001)]:
        pairs.append({"response": resp, "label": label})
    pairs.append({"response": "\\boxed{42}", "label": ""})
    pairs.append({"response": "no box here 42", "label": "42"})
    pairs.append({"response": "\\boxed{}", "label": "0"})
    return pairs


ATOMS = ["1", "2", "3", "7", "12", "0", "-1", "0.5", "1.25", "\\frac{1}{2}", "\\frac{3}{4}", "\\frac12", "\\dfrac{5}{6}",
         "\\sqrt{2}", "\\sqrt{3}", "\\sqrt8", "\\sqrt{12}", "\\pi", "x", "y", "2x", "x^2", "x^{2}", "3y", "\\sqrt{x}",
         "a", "b", "10\\%", "1,000", "(1+x)", "\\left(x-1\\right)", "\\frac{x}{3}", "\\frac{1}{x}", "e", "i", "2^{3}",
         "4^{1/2}", "\\frac{\\sqrt{2}}{2}", "\\cdot", "45^\\circ", "\\text{cm}", "\\infty", "1.0", ".5", "\\$5"]
OPS = ["+", "-", "", "\\cdot ", "*", "/", " \\times ", "^"]


def random_expression(depth=0):
    if depth > 1 or rng.random() < 0.45:
        return rng.choice(ATOMS)
    left, right = random_expression(depth + 1), random_expression(depth + 1)
    form = rng.random()
    if form < 0.15:
        return "\\frac{" + left + "}{" + right + "}"
    if form < 0.22:
        return "\\sqrt{" + left + "}"
    if form < 0.3:
        return "(" + left + ", " + right + ")"
    return left + rng.choice(OPS) + right


def math_random_pairs():
    # Random expressions against each other and against rewritten forms of themselves, so the
    # sympy path (not only string normalisation) decides most pairs.
    pairs = []
    while len(pairs) < 1500:
        gt = random_expression()
        r = rng.random()
        if r < 0.35:
            ans = gt
            for a, b in [("\\frac12", "\\frac{1}{2}"), ("0.5", "\\frac{1}{2}"), ("2x", "x+x"), ("x^2", "x\\cdot x"),
                         ("\\sqrt{12}", "2\\sqrt{3}"), ("\\sqrt8", "2\\sqrt{2}"), ("\\cdot", "*"), ("3y", "y+2y"),
                         ("12", "3\\cdot 4"), ("1.25", "\\frac{5}{4}"), ("\\pi", "\\frac{2\\pi}{2}")]:
                if rng.random() < 0.5:
                    ans = ans.replace(a, b)
        elif r < 0.5:
            ans = gt + rng.choice(["+0", "+1", "\\cdot 1", "-0", "*2", " "])
        else:
            ans = random_expression()
        pairs.append({"response": "So the answer is \\boxed{" + ans + "}.", "label": gt})
    return pairs


# Answer forms seen in MATH/AIME-style data, in classes of (mostly) equivalent spellings.
FORM_CLASSES = [
    ["(-\\infty, 2) \\cup (3, \\infty)", "(-\\infty,2)\\cup(3,\\infty)", "(-inf, 2) U (3, inf)", "x<2 \\text{ or } x>3"],
    ["[1, 5)", "[1,5)", "1 \\le x < 5", "[1,5]"],
    ["3 \\times 10^5", "300000", "3\\cdot 10^{5}", "3e5", "300,000"],
    ["\\pm 2", "2, -2", "-2, 2", "\\pm2", "2"],
    ["3+4i", "4i+3", "3 + 4 i", "3-4i", "(3+4i)"],
    ["\\sqrt[3]{2}", "2^{1/3}", "2^(1/3)", "1.26"],
    ["\\log_2 8", "3", "\\log_{2}8", "\\ln 8/\\ln 2"],
    ["e^2", "e^{2}", "7.389", "e*e", "ee"],
    ["\\frac{1}{2}x^2", "\\frac{x^2}{2}", "0.5x^2", "x^2/2", "\\frac12 x^2"],
    ["\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "\\begin{pmatrix}1\\\\2\\end{pmatrix}", "(1,2)", "\\left(\\begin{array}{c}1\\\\2\\end{array}\\right)"],
    ["\\text{(A)}", "A", "(A)", "\\textbf{(A)}", "\\text{A}"],
    ["1,234.5", "1234.5", "1{,}234.5", "\\frac{2469}{2}"],
    ["-\\frac{\\sqrt{3}}{3}", "-\\frac{1}{\\sqrt{3}}", "-\\frac{\\sqrt3}{3}", "\\frac{-\\sqrt{3}}{3}", "-0.577"],
    ["\\frac{3\\sqrt{2}}{4}", "\\frac{3}{4}\\sqrt{2}", "\\frac{3}{2\\sqrt{2}}", "0.75\\sqrt{2}", "\\frac{3\\sqrt2}{4}"],
    ["2\\pi r", "2 \\pi r", "2r\\pi", "\\pi r 2", "\\tau r"],
    ["x^2 + 2x + 1", "(x+1)^2", "x^2+2x+1", "1+2x+x^2", "(x+1)(x+1)"],
    ["\\dfrac{7}{12}", "7/12", "\\frac{14}{24}", "0.5833", "\\tfrac7{12}"],
    ["18\\%", "18", "0.18", "18 \\%", "18 percent"],
    ["30^\\circ", "30", "30 degrees", "\\frac{\\pi}{6}", "30^{\\circ}"],
    ["\\$1.50", "1.50", "1.5", "\\$1.5", "150 cents"],
    ["\\{-1, 1\\}", "-1, 1", "1, -1", "\\{1,-1\\}", "\\pm 1"],
    ["y = -2x + 4", "y=-2x+4", "-2x+4", "y = 4 - 2x", "2x + y = 4"],
    ["\\frac{a+b}{2}", "\\frac{b+a}{2}", "(a+b)/2", "0.5a+0.5b", "\\frac{a}{2}+\\frac{b}{2}"],
    ["\\sqrt{a^2+b^2}", "\\sqrt{b^2+a^2}", "(a^2+b^2)^{1/2}", "a+b"],
    ["10", "10.0", "ten", "\\text{10}", "10\\text{ apples}", "1\\,0", "10!", "\\overline{10}"],
    ["\\text{Tuesday}", "Tuesday", "tuesday", "Tue", "\\text{Tues}", "Thursday"],
    ["\\text{even}", "even", "\\text{Even}", "odd", "\\mathrm{even}"],
    ["\\infty", "\\infty", "+\\infty", "infinity", "\\text{infinite}"],
    ["-\\infty", "-\\infty", "-inf", "- \\infty"],
    ["\\emptyset", "\\varnothing", "\\{\\}", "none", "\\text{no solution}"],
    ["0.\\overline{3}", "\\frac{1}{3}", "0.333", "1/3", "0.\\bar{3}"],
    ["4\\sqrt{3} - 6", "-6+4\\sqrt{3}", "4\\sqrt3-6", "2(2\\sqrt{3}-3)", "0.928"],
    ["\\frac{1}{\\sqrt{2}}", "\\frac{\\sqrt{2}}{2}", "\\frac{\\sqrt2}2", "2^{-1/2}", "0.7071"],
    ["1/4", "\\frac14", "0.25", "25\\%", ".25", "\\frac{1}{4}"],
    ["m+n", "n+m", "m + n", "mn", "m - n"],
    ["2^{2009}", "2^2009", "2^{2008}\\cdot 2", "4^{1004.5}"],
]


def math_forms_pairs():
    pairs = []
    for cls in FORM_CLASSES:
        for gt in cls:
            for ans in cls:
                pairs.append({"response": "Thus \\boxed{" + ans + "}", "label": gt})
            other = rng.choice(FORM_CLASSES)
            pairs.append({"response": "Thus \\boxed{" + rng.choice(other) + "}", "label": gt})
    return pairs


# Harder random expressions mixing decimals with symbols and radicals, from their own generator so
# adding them changes no other golden. vime is expected to agree on >= 99.8% here: where sympy's
# own Float rounding leaves a 1e-16 residue on a symbolic term, vime calls the answers equal.
frng = random.Random(99)
FUZZ_ATOMS = ["1", "2", "3", "7", "12", "0", "-1", "0.5", "1.25", "\\frac{1}{2}", "\\frac{3}{4}", "\\frac12", "\\dfrac{5}{6}",
         "\\sqrt{2}", "\\sqrt{3}", "\\sqrt8", "\\sqrt{12}", "\\pi", "x", "y", "2x", "x^2", "x^{2}", "3y", "\\sqrt{x}",
         "a", "b", "10\\%", "1,000", "(1+x)", "\\left(x-1\\right)", "\\frac{x}{3}", "\\frac{1}{x}", "e", "i", "2^{3}",
         "4^{1/2}", "\\frac{\\sqrt{2}}{2}", "\\cdot", "45^\\circ", "\\text{cm}", "\\infty", "1.0", ".5", "\\$5",
         "\\sqrt{18}", "\\sqrt{50}", "5\\sqrt{2}", "3\\sqrt{2}", "\\sqrt{6}", "\\sqrt{2}\\sqrt{3}", "2\\pi", "\\pi^2", "0.25", "\\frac{1}{4}",
         "1.5", "\\frac{3}{2}", "-\\frac{1}{2}", "x^3", "xy", "yx", "2y", "\\sqrt[3]{8}", "8^{1/3}", "1e3", "100", "10^2", "(x+1)^2",
         "\\{1,2\\}", "[0,1]", "(0,1]", "\\ln 2", "\\log 2", "\\sin x", "|x|", "\\pm 1", "1\\frac{1}{2}", "2 \\frac{1}{3}", "\\frac{7}{3}",
         "3.0", "3", "-3", "-(3)", "+3", "0.333", "\\frac{1}{3}", "33\\frac{1}{3}\\%", "\\sqrt{0.25}", "0.5^2", "\\frac{1}{2}^2"]
FUZZ_OPS = ["+", "-", "", "\\cdot ", "*", "/", " \\times ", "^", " ", ""]
def fuzz_expression(d=0):
    if d > 1 or frng.random() < 0.5:
        return frng.choice(FUZZ_ATOMS)
    l, r = fuzz_expression(d+1), fuzz_expression(d+1)
    f = frng.random()
    if f < 0.15: return "\\frac{" + l + "}{" + r + "}"
    if f < 0.22: return "\\sqrt{" + l + "}"
    if f < 0.27: return "(" + l + ", " + r + ")"
    return l + frng.choice(FUZZ_OPS) + r
FUZZ_SUBS = [("\\frac12", "\\frac{1}{2}"), ("0.5", "\\frac{1}{2}"), ("2x", "x+x"), ("x^2", "x\\cdot x"), ("\\sqrt{12}", "2\\sqrt{3}"),
        ("\\sqrt8", "2\\sqrt{2}"), ("\\cdot", "*"), ("3y", "y+2y"), ("12", "3\\cdot 4"), ("1.25", "\\frac{5}{4}"), ("\\pi", "\\frac{2\\pi}{2}"),
        ("\\sqrt{18}", "3\\sqrt{2}"), ("\\sqrt{6}", "\\sqrt{2}\\sqrt{3}"), ("xy", "yx"), ("0.25", "\\frac14"), ("1.5", "\\frac{3}{2}"),
        ("100", "10^2"), ("3", "3.0"), ("\\frac{1}{3}", "0.333"), ("x", "(x)"), ("-1", "-(1)"), ("2\\pi", "\\pi+\\pi")]


def math_fuzz_pairs():
    pairs = []
    for _ in range(6000):
        gt = fuzz_expression()
        r = frng.random()
        if r < 0.45:
            ans = gt
            for a, b in FUZZ_SUBS:
                if frng.random() < 0.5:
                    ans = ans.replace(a, b)
        elif r < 0.55:
            ans = gt + frng.choice(["+0", "+1", "\\cdot 1", "-0", "*2", " ", "1"])
        else:
            ans = fuzz_expression()
        pairs.append({"response": "So \\boxed{" + ans + "}.", "label": gt})
    return pairs


def deepscaler_pairs():
    pairs = []
    wrappers = [
        "<think>thinking \\boxed{99}</think>Final: \\boxed{ANS}",
        "###Response\nThe answer is \\boxed{ANS}",
        "<think>a</think>b</think> \\boxed{ANS}",
        "\\boxed{ANS}",
        "</think>no box ANS",
        "### Response \\boxed{ANS}",
        "###Response x ###Response \\boxed{ANS}",
        "</think>\\fbox{ANS}",
    ]
    for gt, answers in MATH_CASES * 2:
        for ans in answers[:6]:
            w = wrappers[0] if rng.random() < 0.5 else rng.choice(wrappers)
            label = gt
            r = rng.random()
            if r < 0.1:
                label = "\\boxed{" + gt + "}"
            elif r < 0.15 and gt.lstrip("-").isdigit():
                label = int(gt)
            elif r < 0.17:
                label = ""
            pairs.append({"response": w.replace("ANS", ans), "label": label})
    return pairs


DAPO_ANSWERS = ["42", "x = 42", "42.", "$42$", "\\boxed{42}", "42 square units", "42 dollars", "an 42", "42<|im_end|>",
                "42,000", "42000", "\\text{42}", "\\frac{84}{2}", "41", "42 degrees", "forty-two", "\\$42", "42^\\circ",
                "4 2", "042", "42.0", "\\textbf{42}", "42 cm", "the answer is 42", "\\overline{42}", "-42"]
DAPO_GTS = ["42", "42.0", "42000", "-42", "0", "7", "1000"]


def dapo_pairs():
    pairs = []
    prefixes = ["", "Let me think.\n", "Answer: 41 was a wrong guess.\n", "x" * 400 + "\n", "answer : 3\n"]
    suffixes = ["", "\n", "\nDone.", " " + "y" * 320]
    for ans in DAPO_ANSWERS:
        for gt in DAPO_GTS:
            for _ in range(3):
                pre = rng.choice(prefixes)
                suf = rng.choice(suffixes) if rng.random() < 0.3 else ""
                kw = rng.choice(["Answer: ", "answer:", "ANSWER :  ", "The answer: "])
                resp = pre + kw + ans.replace("42", gt.replace(".0", "")) if rng.random() < 0.3 else pre + kw + ans
                pairs.append({"response": resp + suf, "label": gt})
    pairs.append({"response": "no answer line", "label": "42"})
    return pairs


F1_WORDS = ["the", "a", "an", "brown", "fox", "quick", "apple", "day", "yes", "no", "noanswer", "Paris", "France",
            "New", "York", "city", "1990", "Barack", "Obama", "river", "Nile", ",", ".", "!", "'s", "U.S.", "co-op"]


def f1_pairs():
    pairs = [
        {"response": "the brown fox", "label": "a quick brown fox"},
        {"response": "yes", "label": "yes"},
        {"response": "yes", "label": "other"},
        {"response": "An apple, a day", "label": "apple day"},
        {"response": "", "label": ""},
        {"response": "", "label": "fox"},
        {"response": "No", "label": "no."},
        {"response": "no answer", "label": "noanswer"},
    ]
    while len(pairs) < 520:
        def phrase():
            n = rng.randint(0, 7)
            words = [rng.choice(F1_WORDS) for _ in range(n)]
            text = ""
            for w in words:
                text += ("" if w in ",.!'s" and text else " ") + (w.upper() if rng.random() < 0.1 else w)
            return text.strip() + rng.choice(["", "", ".", "  ", "\t"])

        pred, gold = phrase(), phrase()
        if rng.random() < 0.3:
            gold = pred.replace("the ", "a ") if rng.random() < 0.5 else pred
        pairs.append({"response": pred, "label": gold})
    return pairs


GPQA_RESPONSES = [
    "A is correct here", "we ruled out A, then B, settled on C", "Answer: C, but actually A was right, no wait B.",
    "The answer is D.", "My final answer is (B)", "I choose option c", "Choice: E", "</think>The answer is A",
    "<think>The answer is B</think>So C is correct", "Definitely paris.", "It must be Paris, France.",
    "answer is x", "I think B.", "None of them", "Option (A) looks good. Final answer: D", "the choice is obvious: J",
    "answer: b", "Z", "B and C are wrong, so A", "The correct one is 4 moles", "4 moles", "C.", "(d)",
    "Answer is K", "I'm torn between A and B", "b is correct", "The answer: 42", "",
]
GPQA_LABELS = [
    ("A", {}), ("B", {}), ("C", {}), ("D", {}), ("a", {}), (2, {"choices": ["1", "2", "3", "4"]}),
    (0, {}), (9, {}), (12, {}), ("Paris", {"choices": ["London", "Paris", "Rome", "Berlin"]}),
    ("Paris", {}), ("4 moles", {"choices": {"A": "2 moles", "B": "4 moles", "C": "8 moles"}}),
    ("C", {"valid_letters": ["A", "B"]}), ("B", {"valid_letters": ["a", "b"]}),
    ("x", {"correct_letter": "a", "choices": ["x", "y"]}), ("", {"correct_letter": "b"}),
    ("Berlin", {"choices": ["London", "Paris", "Rome", "Berlin"], "answer_text": "Berlin"}),
    ("E", {"choices": ["p", "q", "r", "s", "t"]}), (1.7, {}), ("42", {"correct_answer": "42"}),
]


def gpqa_pairs():
    pairs = []
    for resp, (label, meta) in itertools.product(GPQA_RESPONSES, GPQA_LABELS):
        pair = {"response": resp, "label": label}
        if meta:
            pair["metadata"] = meta
        pairs.append(pair)
    return pairs


# Random text soup for the text graders (letters, answer cues, think markers, labels of every JSON
# type, metadata variants), from its own generator so adding it changes no other golden.
trng = random.Random(5)
TEXT_WORDS = ["Answer", "answer", ":", " ", "is", "the", "A", "B", "C", "D", "E", "a", "b", "option", "choice", "final", "correct", "Paris",
     "paris", "London", "</think>", "\n", ".", ",", "(", ")", "42", "7", "=", "\\boxed{", "}", "$", "\\text{", "x", "an ", "yes", "no",
     "dollars", "1,000", "-", "Ünïcode", "é", "!", "?", "'s", "\t", "###Response", "\\frac{1}{2}", "0.5", "K", "Z"]
def random_text(n): return "".join(trng.choice(TEXT_WORDS) + (" " if trng.random() < 0.5 else "") for _ in range(trng.randint(0, n)))
TEXT_LABELS = ["A", "b", "C", "Paris", "42", "7", " d ", 0, 1, 3, 2.5, -1, True, "", "London", "x"]
TEXT_METAS = [{}, {"choices": ["London", "Paris", "Rome"]}, {"choices": {"A": "x", "B": "Paris"}}, {"valid_letters": ["A", "B"]},
         {"correct_letter": " c "}, {"correct_letter": 3}, {"answer_text": "Paris"}, {"correct_answer": 0}, {"choices": []},
         {"valid_letters": []}, {"choices": ["1", "2", "3", "4", "5", "6"]}]


def text_fuzz_pairs():
    """One list per grader: (gpqa, f1, dapo, deepscaler), 1500 rows each."""
    out = {"gpqa": [], "f1": [], "dapo": [], "deepscaler": []}
    for _ in range(1500):
        resp = random_text(14)
        label, meta = trng.choice(TEXT_LABELS), trng.choice(TEXT_METAS)
        out["gpqa"].append({"response": resp, "label": label, "metadata": meta})
        out["f1"].append({"response": resp, "label": random_text(6)})
        out["dapo"].append({"response": resp, "label": trng.choice(["42", "7", "1000", "-3", "42.0", "1,000"])})
        out["deepscaler"].append({"response": resp, "label": trng.choice(["42", 7, "\\boxed{42}", "", "x", 0.5, "\\frac{1}{2}"])})
    return out


_TEXT_FUZZ = None


def text_fuzz(grader):
    global _TEXT_FUZZ
    if _TEXT_FUZZ is None:
        _TEXT_FUZZ = text_fuzz_pairs()
    return lambda: _TEXT_FUZZ[grader]


def grade(grader, pair):
    grader = grader.replace("_fuzz", "") if grader != "math_fuzz" else "math"
    resp, label, meta = pair["response"], pair["label"], pair.get("metadata")
    if grader in ("math", "math_random", "math_forms", "math_fuzz"):
        return 1 if math_utils.grade_answer_verl(resp, label) else 0
    if grader == "deepscaler":
        return deepscaler.get_deepscaler_rule_based_reward(resp, label)
    if grader == "dapo":
        return math_dapo_utils.compute_score(resp, label)
    if grader == "f1":
        return f1.f1_score(resp, label)[0]
    if grader == "gpqa":
        return gpqa.compute_gpqa_reward(resp, label, metadata=json.loads(json.dumps(meta)) if meta else {})
    raise ValueError(grader)


# LaTeX snippets rendered by pylatexenc (what slime's _parse_latex calls): a direct oracle for
# rm_hub/math/latex_to_text.
LATEX_SNIPPETS = ['\\frac{1}{2}', ' \\frac{x+1}{2}', '\\sqrt{2}', '\\sqrt{x+1}', '\\pi', '2\\sqrt{3}', 'x^{2}', '\\left(1,2\\right)', '\\infty', '\\cdot', '\\times', 'a \\le b', '\\text{hi}', '\\mathbf{x}', '\\dfrac12', '\\{1,2\\}', '\\sqrt[3]{2}', '\\%', '\\cup', '\\ne', '\\pm', '\\alpha', '\\div', '\\log', '\\sin x', '\\,', '\\ ', '\\;', '\\frac{\\sqrt{3}}{2}', '\\frac 1 2', '\\boxed{3}', '\\emph{a}', '\\mathrm{cm}', '\\circ', '\\angle', '\\binom{3}{2}', '\\overline{3}', '\\vec{v}', '\\hat{x}', '\\in', '\\to', '\\lfloor x \\rfloor', '\\ldots', '\\dots', '\\cdots', '\\neq', '\\geq', '\\leq', '\\approx', '\\mp', '\\theta', '\\mathbb{R}', 'x_{1}', '\\textbf{a}', '\\displaystyle 3', '\\tfrac12', '{3}', '\\frac{1}{2}x', 'e^{i\\pi}', '\\exp', '\\ln 2', '\\cos', '\\tan', '\\arcsin', '\\cap', '\\emptyset', '\\sqrt{}', '\\frac{a}{b+c}', '\\frac{-1}{2}', '\\frac{1}{-2}', '\\frac{ab}{c}', '\\frac{1.5}{2}', '\\frac{x^2}{2}', '\\frac{(1)}{2}', '\\sqrt{x^2}', '\\sqrt{ab}', '\\sqrt{2.5}', '\\sqrt{\\frac{1}{2}}', '\\frac{1}{\\sqrt{2}}', '\\cfrac{1}{2}', '\\unknownmacro{3}', '\\mbox{a}', '\\&', '\\#', '\\_', '\\{', '\\}', '\\lbrace', '\\langle', '\\prime', '\\quad', '\\qquad', '\\!', '\\frac12', '\\frac{1}2', '\\sqrt2', '\\sqrt 2', 'x^2', '\\frac{1}{2}\\pi', 'a\\\\b', '\\$', '~', '\\mathit{x}', '\\operatorname{foo}', '\\textit{a}', '\\sqrt{2}x', '3\\cdot 4', '\\sqrt{\\sqrt{2}}', '\\frac{\\frac{1}{2}}{3}', '\\begin{pmatrix}1\\\\2\\end{pmatrix}', '\\dfrac{1}{2}', '\\%5', '5\\%', '10^{\\circ}', '\\degree', '\\frac{1}{2}+\\frac{1}{3}', '\\sqrt{3}/2', '\\frac{a}{b}c', '(\\frac{1}{2}, 3)', '-\\frac{1}{2}', '\\frac{1}{x}', '\\frac{ab}{cd}', '\\frac{a b}{c}', '\\frac{\\pi}{2}', '\\frac{2\\pi}{3}', '\\frac{a+b}{c+d}', '\\frac{a}{b}^2', '\\varnothing', '\\bar{3}', '\\tilde{a}', '\\dot{x}', '\\ddot{x}', '\\mathcal{A}', '\\mathrm{x}', '\\textrm{x}', '\\textit{x}', '\\boldsymbol{x}', '\\underline{3}', '\\widehat{x}', '\\acute{e}', '\\grave{e}', '\\check{x}', '\\breve{x}', '\\not=', '\\nmid', '\\mid', '\\colon', '\\cdotp', '\\lt', '\\gt', '\\leqslant', '\\geqslant', '\\lvert x \\rvert', '\\left', '\\dagger', '\\S', '\\P', '\\copyright', '\\vdots', '\\ddots', '\\ell', '\\Re', '\\Im', '\\aleph', '\\wp', '\\implies', '\\iff', '\\Leftrightarrow', '\\leftarrow', '\\gets', '\\mapsto', '\\uparrow', '\\propto', '\\simeq', '\\cong', '\\doteq', '\\oplus', '\\otimes', '\\odot', '\\bigcup', '\\bigcap', '\\notin', '\\ni', '\\supset', '\\supseteq', '\\subsetneq', '\\hspace{1cm}x', '\\vspace{1cm}', '\\phantom{x}', '\\textstyle 3', '\\scriptstyle 3', '\\limits', '\\nolimits', '\\bmod', '\\pmod{3}', '\\mod', '\\choose', '\\over', '\\atop', '\\tfrac{1}{2}', '\\dbinom{3}{2}', '\\tbinom{3}{2}', '\\varepsilon', '\\vartheta', '\\varpi', '\\varrho', '\\varsigma', '\\upsilon', '\\Upsilon', '\\Xi', '\\Psi', '\\Phi', '\\Lambda', '\\omicron', '\\digamma', '\\textasciitilde', '\\textbackslash', '\\textdollar', '\\textpercent', '\\o', '\\O', '\\ss', '\\ae', '\\i', '\\j', '\\l', '\\L', '\\AA', '\\aa', '\\textdegree', '\\celsius', '\\lbrack', '\\rbrack', '\\backslash', '\\ldotp', '\\square', '\\blacksquare', '\\checkmark', '\\ast', '\\star', '\\wedge', '\\vee', '\\setminus', '\\smallsetminus', '\\measuredangle', '\\triangle', '\\parallel', '\\perp', '\\sim', '\\equiv', '\\le', '\\ge', '\\ll', '\\gg', '\\rightarrow', '\\Rightarrow', '\\partial', '\\nabla', '\\int', '\\iint', '\\oint', '\\sum', '\\prod', '\\lim', '\\max', '\\min', '\\sup', '\\inf', '\\deg', '\\dim', '\\ker', '\\arg', '\\sinh', '\\cosh', '\\tanh', '\\csc', '\\sec', '\\cot', '\\arccos', '\\arctan', '\\lg', '\\det', '\\gcd', '\\Pr', '\\hom', '\\limsup', '\\liminf', '\\operatorname{lcm}', '\\displaystyle', '\\bullet']


def write_latex_goldens():
    from pylatexenc import latex2text

    converter = latex2text.LatexNodes2Text()
    path = os.path.join(OUT, "latex_to_text.jsonl")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        for latex in LATEX_SNIPPETS:
            f.write(json.dumps({"latex": latex, "text": converter.latex_to_text(latex)}, ensure_ascii=False) + "\n")
    os.replace(path + ".tmp", path)
    print(f"latex_to_text: {len(LATEX_SNIPPETS)} snippets -> {path}")


def main():
    os.makedirs(OUT, exist_ok=True)
    for grader, make in [("math", math_pairs), ("math_random", math_random_pairs), ("math_forms", math_forms_pairs),
                         ("math_fuzz", math_fuzz_pairs), ("deepscaler", deepscaler_pairs), ("dapo", dapo_pairs),
                         ("f1", f1_pairs), ("gpqa", gpqa_pairs),
                         ("gpqa_fuzz", text_fuzz("gpqa")), ("f1_fuzz", text_fuzz("f1")),
                         ("dapo_fuzz", text_fuzz("dapo")), ("deepscaler_fuzz", text_fuzz("deepscaler"))]:
        pairs = make()
        path = os.path.join(OUT, grader + ".jsonl")
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            for pair in pairs:
                row = dict(pair)
                row["reward"] = grade(grader, pair)
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        os.replace(tmp, path)
        print(f"{grader}: {len(pairs)} pairs -> {path}")
    write_latex_goldens()


if __name__ == "__main__":
    main()
