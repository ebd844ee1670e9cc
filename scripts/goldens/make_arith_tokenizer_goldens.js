#!/usr/bin/env node
// Makes tests/data/quickstart/arith_tokenizer_goldens.jsonl: ids of the quickstart tokenizer
// (make_arith_task's model/tokenizer.json) from HF's own Rust tokenizers library (npm
// `tokenizers@0.23.2`), which vime's HfTokenizer must match exactly ([arith_task]).
//
//   mkdir -p /tmp/tok-oracle && (cd /tmp/tok-oracle && npm install tokenizers@0.23.2)
//   build/bin/make_arith_task --out /tmp/arith
//   NODE_PATH=/tmp/tok-oracle/node_modules node scripts/goldens/make_arith_tokenizer_goldens.js /tmp/arith
//
// Each line: {"text", "ids" (add_special_tokens=false), "decoded" (decode(ids), specials kept)}.
'use strict';
const fs = require('fs');
const path = require('path');
const {Tokenizer} = require('tokenizers');

const taskDir = path.resolve(process.argv[2] || '/tmp/arith');
const out = path.resolve(__dirname, '..', '..', 'tests', 'data', 'quickstart',
                         'arith_tokenizer_goldens.jsonl');

function rng(seed) {  // mulberry32
  return () => {
    seed |= 0; seed = (seed + 0x6D2B79F5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const r = rng(20261123);
const int = (n) => Math.floor(r() * n);
const num = () => String(int(10 ** (1 + int(5))));

const texts = ['', ' ', '\\boxed{', '\\boxed{}', '\\boxed', '\\box', '\\\\boxed{{', '}}', '<|endoftext|>',
  '<|im_start|>user\n1+1=<|im_end|>\n<|im_start|>assistant\n', '<calc>12*7</calc>', '</calc><result>84</result>',
  '<calc><calc>', '<result>error: unexpected \'x\' at position 1</result>', 'héllo wörld 你好 😀', '\t\n\r\n'];
for (let i = 0; i < 300; ++i) {
  const op = '+-*'[int(3)];
  const a = num(), b = num();
  const answer = op === '+' ? String(BigInt(a) + BigInt(b)) : op === '-' ? String(BigInt(a) - BigInt(b))
                                                                          : String(BigInt(a) * BigInt(b));
  const prompt = `${a}${op}${b}=`;
  switch (i % 6) {
    case 0: texts.push(prompt); break;
    case 1: texts.push(`\\boxed{${answer}}`); break;
    case 2: texts.push(`${prompt}\\boxed{${answer}}<|endoftext|>`); break;
    case 3: texts.push(`${prompt} <calc>${a}${op}(${b})</calc><result>${answer}</result> \\boxed{${answer}}`); break;
    case 4: texts.push(`${a} ${op} ${b} = ${answer}\\boxed{${answer}} \\boxed{${b}}`); break;
    default: {  // printable ASCII noise around task pieces
      let s = '';
      for (let k = 0; k < 5 + int(20); ++k) s += r() < 0.2 ? '\\boxed{' : String.fromCharCode(32 + int(95));
      texts.push(s);
    }
  }
}

const tok = Tokenizer.fromFile(path.join(taskDir, 'model', 'tokenizer.json'));
(async () => {
  const lines = [];
  for (const text of texts) {
    const enc = await tok.encode(text, null, {addSpecialTokens: false});
    const ids = Array.from(enc.getIds());
    const decoded = await tok.decode(ids, false);
    lines.push(JSON.stringify({text, ids, decoded}));
  }
  fs.mkdirSync(path.dirname(out), {recursive: true});
  fs.writeFileSync(out, lines.join('\n') + '\n');
  console.log(`wrote ${lines.length} lines to ${out}`);
})();
