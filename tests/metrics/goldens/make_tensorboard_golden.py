#!/usr/bin/python3
"""Writes the TensorBoard event-file golden that tests/metrics/tensorboard_sink_test.cpp compares
vime's writer against, byte for byte.

Independent of vime's C++: the Event/Summary protos are serialized by Google's protobuf runtime
(Debian python3-protobuf, messages compiled by protoc from a copy of the fields of TensorFlow's
event.proto and summary.proto), the TFRecord framing uses `struct`, and CRC32C is a bitwise
implementation of the reflected Castagnoli polynomial, checked here against RFC 3720's vectors.

  apt-get install python3-protobuf protobuf-compiler
  tests/metrics/goldens/make_tensorboard_golden.py

Writes tensorboard_scenario.json (the log calls, wall times included) and
tensorboard_golden.tfevents (what a writer must produce for them).

  tests/metrics/goldens/make_tensorboard_golden.py --check EVENT_FILE...

instead reads event files a vime run wrote, checking every CRC and parsing every record with the
protobuf runtime, and prints a summary of the records, tags and steps.
"""
import importlib
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# Field numbers as in tensorflow/core/util/event.proto and tensorflow/core/framework/summary.proto.
EVENT_PROTO = """
syntax = "proto3";
package golden;
message SummaryValue {
  string node_name = 7;
  string tag = 1;
  oneof value {
    float simple_value = 2;
    bytes obsolete_old_style_histogram = 3;
  }
}
message Summary { repeated SummaryValue value = 1; }
message Event {
  double wall_time = 1;
  int64 step = 2;
  oneof what {
    string file_version = 3;
    bytes graph_def = 4;
    Summary summary = 5;
  }
}
"""


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecord(data: bytes) -> bytes:
    length = struct.pack("<Q", len(data))
    return (length + struct.pack("<I", masked_crc32c(length)) + data +
            struct.pack("<I", masked_crc32c(data)))


def check_crc32c():
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(bytes(32)) == 0x8A9136AA  # RFC 3720 B.4
    assert crc32c(b"\xff" * 32) == 0x62A8AB43
    assert crc32c(bytes(range(32))) == 0x46DD794E
    assert crc32c(bytes(range(31, -1, -1))) == 0x113FDB5C


def compile_proto(workdir):
    with open(os.path.join(workdir, "golden_event.proto"), "w") as f:
        f.write(EVENT_PROTO)
    subprocess.run(["protoc", f"--proto_path={workdir}", f"--python_out={workdir}",
                    "golden_event.proto"], check=True)
    sys.path.insert(0, workdir)
    return importlib.import_module("golden_event_pb2")


# The log calls: (step_key, step, metrics). Metrics are logged in sorted tag order; keys ending
# in "/step" are not written as scalars. Steps cover proto3's omitted 0, one- and multi-byte
# varints and a negative int64; values cover 0, negatives, float rounding, huge, NaN and inf.
LOGS = [
    ("rollout/step", 0, {"rollout/response_len/mean": 12.5, "rollout/truncated_ratio": 0.0,
                         "rollout/zero_std/count_1.0": 3.0}),
    ("train/step", 1, {"train/loss": -0.123456789, "train/grad_norm": 1.0e30,
                       "train/ppo_kl": 0.0, "train/lr-pg_0": 1e-6}),
    ("train/step", 300, {"train/pg_loss": float("nan"), "train/entropy_loss": float("inf"),
                         "train/pg_clipfrac": float("-inf"), "train/step": 300.0}),
    ("eval/step", 2 ** 40 + 7, {"eval/gsm8k": 0.7, "eval/gsm8k-pass@4": 0.875,
                                "eval/gsm8k/response_len/max": 4096.0}),
    ("rollout/step", -5, {"passrate/pass@1": 1.0 / 3.0}),
]
START_WALL_TIME = 1700000000.25  # the file_version event's; the i-th log call gets + 1.5 * (i + 1)


def check_files(paths):
    check_crc32c()
    with tempfile.TemporaryDirectory() as workdir:
        pb = compile_proto(workdir)
        for path in paths:
            with open(path, "rb") as f:
                data = f.read()
            at, events = 0, []
            while at < len(data):
                (length,) = struct.unpack_from("<Q", data, at)
                assert struct.unpack_from("<I", data, at + 8)[0] == masked_crc32c(data[at:at + 8])
                payload = data[at + 12:at + 12 + length]
                assert len(payload) == length, f"{path}: truncated record at byte {at}"
                assert struct.unpack_from("<I", data, at + 12 + length)[0] == masked_crc32c(payload)
                event = pb.Event()
                event.ParseFromString(payload)
                assert event.SerializeToString() == payload, "not in canonical serialization"
                events.append(event)
                at += 12 + length + 4
            assert events and events[0].file_version == "brain.Event:2", "no file_version first"
            tags = {v.tag for e in events[1:] for v in e.summary.value}
            steps = [e.step for e in events[1:]]
            print(f"{path}: ok, {len(events)} records, {len(tags)} tags, "
                  f"steps {min(steps, default=None)}..{max(steps, default=None)}")


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--check":
        check_files(sys.argv[2:])
        return
    check_crc32c()
    with tempfile.TemporaryDirectory() as workdir:
        pb = compile_proto(workdir)
        out = bytearray()
        first = pb.Event(wall_time=START_WALL_TIME, file_version="brain.Event:2")
        out += tfrecord(first.SerializeToString())
        scenario = {"start_wall_time": START_WALL_TIME, "logs": []}
        for i, (step_key, step, metrics) in enumerate(LOGS):
            wall_time = START_WALL_TIME + 1.5 * (i + 1)
            event = pb.Event(wall_time=wall_time, step=step)
            event.summary.SetInParent()
            for tag in sorted(metrics):
                if tag.endswith("/step"):
                    continue
                event.summary.value.add(tag=tag, simple_value=metrics[tag])
            out += tfrecord(event.SerializeToString())
            scenario["logs"].append({"step_key": step_key, "step": step, "wall_time": wall_time,
                                     "metrics": metrics})
        # The float32 each value becomes, for the test's own decoder.
        for log in scenario["logs"]:
            log["float32"] = {k: struct.unpack("<f", struct.pack("<f", v))[0]
                              for k, v in log["metrics"].items() if not k.endswith("/step")}
    with open(os.path.join(HERE, "tensorboard_golden.tfevents"), "wb") as f:
        f.write(out)
    with open(os.path.join(HERE, "tensorboard_scenario.json"), "w") as f:
        json.dump(scenario, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(out)} bytes, {len(LOGS) + 1} records")


if __name__ == "__main__":
    main()
