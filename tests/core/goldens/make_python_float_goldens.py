"""Writes python_float_goldens.json: repr() of floats as CPython prints them, for
tests/core/python_float_test.cpp. Each case holds the float as float.hex() (exact) and its repr.

    python3 tests/core/goldens/make_python_float_goldens.py
"""
import json
import math
import os
import random
import struct
import sys

values = [0.0, -0.0, math.inf, -math.inf, math.nan, -math.nan, 1.0, -1.0, 0.1, 0.2, 0.1 + 0.2,
          1 / 3, 2 / 3, 0.5, 2.5, 100.0, 123.456, 2.675, 3.14159, math.pi, math.e]
# The fixed/exponent boundaries: 1e-4 <= |x| < 1e16 prints fixed.
for b in (1e-4, 1e-5, 1e15, 1e16, 1e17):
    values += [b, -b, math.nextafter(b, 0), math.nextafter(b, math.inf)]
values += [9999999999999998.0, 1e16 - 2, 0.00009999999999999999, 0.0001234, 1.5e16, 1.5e-5]
# Integers around 2**53, where floats stop holding every integer.
values += [float(2**53), float(2**53 + 2), float(2**53 - 1), 123456789012345680.0, 1e22, 1e23]
# The ends of the range: subnormals, the smallest normal, the largest finite.
values += [5e-324, -5e-324, 1e-323, 2.2250738585072014e-308, 2.225073858507201e-308,
           1.7976931348623157e308, -1.7976931348623157e308]
# Every power of ten, and 1.5 times it.
values += [float(f"1e{k}") for k in range(-323, 309)]
values += [float(f"1.5e{k}") for k in range(-300, 300, 7)]
# Random bit patterns (every exponent) and random metric-like values.
rng = random.Random(1234)
for _ in range(200):
    x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
    if not math.isnan(x):
        values.append(x)
values += [rng.uniform(-3, 3) for _ in range(50)]
values += [round(rng.uniform(-1, 1), k) for k in range(1, 8) for _ in range(5)]

cases = [{"hex": float.hex(x), "repr": repr(x)} for x in values]
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_float_goldens.json")
with open(out, "w") as f:  # one case a line
    f.write('{"python": "CPython %s", "cases": [\n' % sys.version.split()[0])
    f.write(",\n".join(json.dumps(c) for c in cases))
    f.write("\n]}\n")
print(f"{len(cases)} cases -> {out}")
