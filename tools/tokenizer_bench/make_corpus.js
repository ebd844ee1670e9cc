// The fixed benchmark corpus: English prose (Debian's /usr/share/common-licenses) and the multilingual
// golden strings (code, math, emoji, digits, whitespace, special tokens) of tests/data/tokenizer/,
// as JSONL documents of about 16 KB. Usage: node make_corpus.js OUT.jsonl
'use strict';
const fs = require('fs');
const path = require('path');
const root = path.resolve(__dirname, '..', '..');
const pieces = [];
const licenses = '/usr/share/common-licenses';
for (const name of fs.readdirSync(licenses).sort()) {
  const file = path.join(licenses, name);
  if (fs.statSync(file).isFile()) pieces.push(fs.readFileSync(file, 'utf8'));
}
for (const name of ['qwen3', 'llama3', 'gpt2']) {
  const lines = fs.readFileSync(path.join(root, 'tests', 'data', 'tokenizer', `${name}_encode.jsonl`), 'utf8');
  for (const line of lines.split('\n')) if (line) pieces.push(JSON.parse(line).text);
}
const docs = [];
let doc = '';
for (const p of pieces) {
  doc += p + '\n';
  if (doc.length >= 16384) { docs.push(doc); doc = ''; }
}
if (doc) docs.push(doc);
fs.writeFileSync(process.argv[2], docs.map((text) => JSON.stringify({text})).join('\n') + '\n');
const bytes = docs.reduce((n, d) => n + Buffer.byteLength(d), 0);
console.error(`corpus: ${docs.length} documents, ${bytes} bytes`);
