#!/usr/bin/python3
"""Chat-template goldens from transformers' own Jinja setup, rebuilt on Debian python3-jinja2.

Run with Debian's interpreter (apt-get install -y python3-jinja2):
    /usr/bin/python3 scripts/goldens/make_chat_template_goldens.py

The environment below is transformers' _compile_jinja_template (src/transformers/utils/
chat_template_utils.py): ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with
loopcontrols and the {% generation %} tag, its tojson filter (json.dumps with ensure_ascii=False),
raise_exception and strftime_now. Rendering passes messages, tools, documents=None,
add_generation_prompt and {**special_tokens_map, **kwargs}, as apply_chat_template(tokenize=False)
does.

Writes tests/data/chat_templates/<template>.jsonl: one rendering per line,
{"id", "messages", "tools", "add_generation_prompt", "kwargs", "text"} or, where the template
raised, "error": {"type", "message"} instead of "text". And tests/data/chat_templates/
jinja_cases.jsonl: a {"context": ...} line, then one line per case of jinja_unit_cases.py,
{"name", "template", "text"} or "error": {"type", "message", "line"} (the template line Jinja2
reports).
"""
import json
import os
import sys
import traceback
from datetime import datetime

import jinja2
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ASSETS = os.path.join(ROOT, ".cache", "assets")
OUT = os.path.join(ROOT, "tests", "data", "chat_templates")
assert jinja2.__version__ == "3.1.2", "goldens were made with Debian bookworm's python3-jinja2 3.1.2"


class AssistantTracker(Extension):
    """transformers' {% generation %} tag, without the index tracking (it does not change the text)."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_generation_support"), [], [], body).set_lineno(lineno)

    @jinja2.pass_eval_context
    def _generation_support(self, context, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(format):
    return datetime.now().strftime(format)


def compile_template(source):
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                       extensions=[AssistantTracker, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env.from_string(source)


def special_tokens_map(config):
    """PreTrainedTokenizerBase.special_tokens_map: the set tokens as strings."""
    out = {}
    for name in ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]:
        token = config.get(name)
        if isinstance(token, dict):
            token = token.get("content")
        if isinstance(token, str):
            out[name] = token
    extra = config.get("additional_special_tokens")
    if extra:
        out["additional_special_tokens"] = [t["content"] if isinstance(t, dict) else t for t in extra]
    return out


# --- the conversations -------------------------------------------------------------------------

WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather in a city.",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City name, e.g. Paris"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city"]}}}
SEARCH_TOOL = {"type": "function", "function": {
    "name": "search", "description": "Search the web — returns snippets (größte Treffer first).",
    "parameters": {"type": "object", "properties": {
        "query": {"type": "string"}, "top_k": {"type": "integer", "default": 3},
        "filters": {"type": "object", "properties": {"site": {"type": "string"}, "recent": {"type": "boolean"}}}},
        "required": ["query"]}}}
CALC_TOOL = {"name": "calculator", "description": "Evaluate an arithmetic expression.",
             "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}}}

SYSTEM = {"role": "system", "content": "You are a careful assistant. Answer briefly."}
USER = {"role": "user", "content": "What is 17 * 23?"}
ASSISTANT = {"role": "assistant", "content": "17 * 23 = 391."}


def call(name, arguments, wrap=True, call_id=None):
    fn = {"name": name, "arguments": arguments}
    out = {"type": "function", "function": fn} if wrap else fn
    if call_id:
        out = {"id": call_id, **out}
    return out


CONVERSATIONS = [
    ("single_user", [USER], None),
    ("system_user", [SYSTEM, USER], None),
    ("multi_turn", [SYSTEM, USER, ASSISTANT, {"role": "user", "content": "And 391 / 17?"}], None),
    ("three_turns_no_system", [
        {"role": "user", "content": "Hi!"}, {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "Tell me a joke."}, {"role": "assistant", "content": "Why did the chicken cross the road?"},
        {"role": "user", "content": "Why?"}], None),
    ("ends_with_assistant", [USER, ASSISTANT], None),
    ("reasoning_content_last", [USER, {"role": "assistant", "content": "391.",
                                       "reasoning_content": "17 * 20 = 340, 17 * 3 = 51, 340 + 51 = 391."}], None),
    ("reasoning_content_earlier", [
        USER, {"role": "assistant", "content": "391.", "reasoning_content": "\nCompute 17*23.\n"},
        {"role": "user", "content": "Double it."},
        {"role": "assistant", "content": "782.", "reasoning_content": "391 * 2 = 782."}], None),
    ("reasoning_content_null", [USER, {"role": "assistant", "content": "391.", "reasoning_content": None}], None),
    ("think_inline", [USER, {"role": "assistant", "content": "<think>\n17*23: 340 + 51.\n</think>\n\n391."}], None),
    ("think_inline_then_user", [
        USER, {"role": "assistant", "content": "<think>\nfast math\n</think>\n\n391."},
        {"role": "user", "content": "Thanks!"}], None),
    ("think_without_open_tag", [USER, {"role": "assistant", "content": "just thinking\n</think>\nDone."}], None),
    ("tools_user", [{"role": "user", "content": "What's the weather in Paris?"}], [WEATHER_TOOL]),
    ("tools_system_user", [SYSTEM, {"role": "user", "content": "Weather in Tōkyō and Zürich?"}], [WEATHER_TOOL, SEARCH_TOOL]),
    ("tool_call_dict_args", [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [call("get_weather", {"city": "Paris", "unit": "celsius"})]},
    ], [WEATHER_TOOL]),
    ("tool_call_string_args", [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [call("get_weather", "{\"city\": \"Paris\"}", call_id="call_0")]},
    ], [WEATHER_TOOL]),
    ("tool_call_unwrapped", [
        {"role": "user", "content": "Compute 2**10."},
        {"role": "assistant", "content": "Let me compute.", "tool_calls": [call("calculator", {"expression": "2**10"}, wrap=False)]},
    ], [CALC_TOOL]),
    ("tool_round_trip", [
        SYSTEM, {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [call("get_weather", {"city": "Paris"})]},
        {"role": "tool", "content": "{\"temperature\": 18.5, \"sky\": \"cloudy\"}"},
        {"role": "assistant", "content": "It is 18.5 °C and cloudy in Paris."}], [WEATHER_TOOL]),
    ("parallel_tool_calls", [
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {"role": "assistant", "content": "Checking both.", "tool_calls": [
            call("get_weather", {"city": "Paris"}), call("get_weather", {"city": "Rome", "unit": "fahrenheit"})]},
        {"role": "tool", "content": "Paris: 18"}, {"role": "tool", "content": "Rome: 77"},
        {"role": "assistant", "content": "Paris 18 °C, Rome 77 °F."}], [WEATHER_TOOL]),
    ("multi_step_tools", [
        {"role": "user", "content": "Find the capital of France, then its weather."},
        {"role": "assistant", "content": "", "reasoning_content": "Search first.",
         "tool_calls": [call("search", {"query": "capital of France", "top_k": 1, "filters": {"recent": True, "site": None}})]},
        {"role": "tool", "content": "Paris"},
        {"role": "assistant", "content": "", "tool_calls": [call("get_weather", {"city": "Paris"})]},
        {"role": "tool", "content": "18 °C"},
        {"role": "assistant", "content": "Paris; 18 °C."}], [SEARCH_TOOL, WEATHER_TOOL]),
    ("tool_response_in_user_turn", [
        {"role": "user", "content": "Start."},
        {"role": "assistant", "content": "<think>\nplan\n</think>\n\nCalling.", "tool_calls": [call("search", {"query": "x"})]},
        {"role": "user", "content": "<tool_response>\nresult\n</tool_response>"},
        {"role": "assistant", "content": "<think>\ngot it\n</think>\n\nDone."}], [SEARCH_TOOL]),
    ("tool_args_values", [
        {"role": "user", "content": "Edge values"},
        {"role": "assistant", "content": "", "tool_calls": [call("search", {
            "query": "naïve café \"quoted\" \\ back\nslash\ttab", "top_k": 10, "ratio": 0.1, "big": 1e21, "small": 1.5e-7,
            "neg": -0.0, "flags": [True, False, None], "nested": {"z": 1, "a": [], "m": {}}, "emoji": "🦙👍🏽", "ctl": "\u0001\u007f"})]},
    ], [SEARCH_TOOL]),
    ("unicode_content", [
        {"role": "system", "content": "Réponds en français. 日本語も話せます。"},
        {"role": "user", "content": "Ça va? 你好吗？ Привет! 👋🏽 e\u0301 (NFD)"},
        {"role": "assistant", "content": "Très bien — 很好 — хорошо 🙂"}], None),
    ("whitespace_content", [
        {"role": "user", "content": "  leading and trailing  \n\n"},
        {"role": "assistant", "content": "\n\n  padded answer\t \n"},
        {"role": "user", "content": "\tline1\n  line2\r\nline3\n"}], None),
    ("template_like_content", [
        {"role": "user", "content": "Explain {{ messages }} and {% if %} and {# comment #} in Jinja."},
        {"role": "assistant", "content": "They are Jinja syntax: {{ x }}, {% for %}, {# #}."}], None),
    ("empty_content", [{"role": "user", "content": ""}, {"role": "assistant", "content": ""}], None),
    ("system_only", [SYSTEM], None),
    ("two_systems", [SYSTEM, USER, {"role": "system", "content": "Second system note."}, ASSISTANT], None),
    ("assistant_content_null", [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [call("get_weather", "{\"city\": \"Oslo\"}")]},
        {"role": "tool", "content": "-3"}], [WEATHER_TOOL]),
    ("user_content_null", [{"role": "user", "content": None}], None),
    ("missing_content", [{"role": "user"}], None),
    ("no_messages", [], None),
    ("tools_empty_list", [USER], []),
    ("long_conversation", [SYSTEM] + [m for i in range(6) for m in (
        {"role": "user", "content": f"Question {i}: what is {i} squared?"},
        {"role": "assistant", "content": f"{i} squared is {i * i}."})], None),
    ("ipython_role", [
        {"role": "user", "content": "Run it."},
        {"role": "assistant", "content": None, "tool_calls": [call("calculator", {"expression": "6*7"})]},
        {"role": "ipython", "content": {"result": 42}}], [CALC_TOOL]),
    ("user_not_first", [ASSISTANT, USER], None),
    ("thinking_field", [  # gpt-oss names reasoning "thinking"
        {"role": "developer", "content": "Be terse."}, USER,
        {"role": "assistant", "content": "", "thinking": "Use the tool.", "tool_calls": [call("calculator", {"expression": "17*23"})]},
        {"role": "tool", "content": "391"},
        {"role": "assistant", "content": "391.", "thinking": "The tool said 391."}], [
        {"type": "function", "function": {"name": "calculator", "description": "Evaluate arithmetic.", "parameters": {
            "type": "object", "properties": {
                "expression": {"type": "string", "description": "e.g. 2+2"},
                "precision": {"type": "integer", "default": 2},
                "mode": {"type": "string", "enum": ["exact", "float"], "default": "exact"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "options": {"type": "object", "properties": {"round": {"type": "boolean"}}, "required": ["round"]},
                "value": {"oneOf": [{"type": "number"}, {"type": "string", "description": "as text"}]},
                "pair": {"type": ["number", "string"]}},
            "required": ["expression"]}}}]),
]

# (add_generation_prompt, kwargs) variants applied to every conversation.
VARIANTS = [
    ("gen", True, {}),
    ("nogen", False, {}),
    ("gen_think_on", True, {"enable_thinking": True}),
    ("gen_think_off", True, {"enable_thinking": False}),
    ("nogen_think_off", False, {"enable_thinking": False}),
]
EXTRA_KWARGS = {  # per-template extras that their templates read
    "gpt_oss": [("gen_effort_high", True, {"reasoning_effort": "high", "model_identity": "You are a test model."}),
                ("nogen_builtin_tools", False, {"builtin_tools": ["browser", "python"]})],
    "llama3_3_generation": [("gen_date", True, {"date_string": "01 Jan 2025"}),
                            ("gen_tools_in_system", True, {"tools_in_user_message": False}),
                            ("gen_builtin_tools", True, {"builtin_tools": ["code_interpreter", "calculator"]})],
}


def templates():
    for name, asset in [("qwen3", "tokenizer-qwen3"), ("llama3", "tokenizer-llama3")]:
        with open(os.path.join(ASSETS, asset, "tokenizer_config.json"), encoding="utf-8") as f:
            config = json.load(f)
        yield name, config["chat_template"], special_tokens_map(config)
    template_dir = os.path.join(OUT, "templates")
    for file in sorted(os.listdir(template_dir)):
        if not file.endswith(".jinja"):
            continue
        name = file[: -len(".jinja")]
        with open(os.path.join(template_dir, file), encoding="utf-8") as f:
            source = f.read()
        with open(os.path.join(template_dir, name + ".special_tokens.json"), encoding="utf-8") as f:
            tokens = json.load(f)
        yield name, source, tokens


def error_line(e):
    if isinstance(e, jinja2.exceptions.TemplateSyntaxError):
        return e.lineno
    frames = [f.lineno for f in traceback.extract_tb(e.__traceback__) if f.filename == "<template>"]
    return frames[-1] if frames else None


def unit_cases():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from jinja_unit_cases import CASES, CTX
    lines = [json.dumps({"context": CTX}, ensure_ascii=False)]
    names = set()
    for name, source, _ in CASES:
        assert name not in names, name
        names.add(name)
        record = {"name": name, "template": source}
        try:
            record["text"] = compile_template(source).render(**CTX)
        except Exception as e:
            record["error"] = {"type": type(e).__name__, "message": str(e), "line": error_line(e)}
        lines.append(json.dumps(record, ensure_ascii=False))
    with open(os.path.join(OUT, "jinja_cases.jsonl"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    errors = sum('"error":' in line for line in lines)
    return f"jinja_cases: {len(lines) - 1} cases, {errors} errors"


def main():
    summary = [unit_cases()]
    for name, source, tokens in templates():
        compiled = compile_template(source)
        lines = []
        for conv_name, messages, tools in CONVERSATIONS:
            for variant, add_generation_prompt, kwargs in VARIANTS + EXTRA_KWARGS.get(name, []):
                record = {"id": f"{name}/{conv_name}/{variant}", "messages": messages, "tools": tools,
                          "add_generation_prompt": add_generation_prompt, "kwargs": kwargs}
                if "strftime_now" in source:  # the test puts its own today in place of this one
                    record["today"] = datetime.now().strftime("%Y-%m-%d")
                try:
                    record["text"] = compiled.render(messages=messages, tools=tools, documents=None,
                                                     add_generation_prompt=add_generation_prompt,
                                                     **{**tokens, **kwargs})
                except Exception as e:  # the template raised: the golden records that it must raise
                    record["error"] = {"type": type(e).__name__, "message": str(e)}
                lines.append(json.dumps(record, ensure_ascii=False))
        with open(os.path.join(OUT, name + ".jsonl"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        errors = sum('"error":' in line for line in lines)
        summary.append(f"{name}: {len(lines)} renderings, {len(lines) - errors} texts, {errors} errors")
    print("\n".join(summary))


if __name__ == "__main__":
    sys.exit(main())
