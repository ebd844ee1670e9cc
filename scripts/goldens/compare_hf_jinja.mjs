// Second opinion: renders the chat-template goldens (made with transformers' Jinja setup on
// python3-jinja2, make_chat_template_goldens.py) with @huggingface/jinja and lists where the two
// disagree. The goldens stay the reference; this shows which corner cases need them.
//   npm install --prefix .cache/hf-jinja @huggingface/jinja@0.5.11
//   node scripts/goldens/compare_hf_jinja.mjs .cache/hf-jinja
import { createRequire } from "module";
import fs from "fs";
import path from "path";

const prefix = path.resolve(process.argv[2] ?? ".cache/hf-jinja");
const { Template } = createRequire(path.join(prefix, "package.json"))("@huggingface/jinja");
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
const dir = path.join(root, "tests/data/chat_templates");

function templateOf(name) {
  if (name === "qwen3" || name === "llama3") {
    const config = JSON.parse(fs.readFileSync(path.join(root, ".cache/assets", `tokenizer-${name}`, "tokenizer_config.json")));
    const tokens = {};
    for (const key of ["bos_token", "eos_token", "pad_token", "unk_token"]) {
      if (typeof config[key] === "string") tokens[key] = config[key];
    }
    return [config.chat_template, tokens];
  }
  return [fs.readFileSync(path.join(dir, "templates", `${name}.jinja`), "utf8"),
          JSON.parse(fs.readFileSync(path.join(dir, "templates", `${name}.special_tokens.json`), "utf8"))];
}

let total = 0, agree = 0;
for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort()) {
  const name = file.replace(/\.jsonl$/, "");
  const lines = fs.readFileSync(path.join(dir, file), "utf8").trim().split("\n").map((l) => JSON.parse(l));
  let context = {}, template = null, tokens = {};
  if (name === "jinja_cases") context = lines.shift().context;
  else [template, tokens] = templateOf(name);
  const differ = [];
  for (const g of lines) {
    total++;
    let got, error = null;
    try {
      const t = new Template(template ?? g.template);
      got = template ? t.render({ messages: g.messages, tools: g.tools, documents: null,
                                  add_generation_prompt: g.add_generation_prompt, ...tokens, ...g.kwargs })
                     : t.render(context);
    } catch (e) {
      error = String(e.message ?? e);
    }
    const same = "text" in g ? error === null && got === g.text : error !== null;
    if (same) agree++;
    else differ.push(`${g.id ?? g.name}: transformers ${"text" in g ? JSON.stringify(g.text.slice(0, 80)) : "raises " + g.error.type}` +
                     `, @huggingface/jinja ${error === null ? JSON.stringify(got.slice(0, 80)) : "raises " + error.slice(0, 80)}`);
  }
  console.log(`${name}: ${lines.length - differ.length}/${lines.length} agree`);
  for (const d of differ.slice(0, 12)) console.log("  " + d);
}
console.log(`all: ${agree}/${total} agree`);
