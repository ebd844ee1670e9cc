// HF's Rust tokenizers (npm tokenizers@0.23.2) on the benchmark corpus, one document per call, one
// thread: prints "hf MB/s tokens". Usage: node hf_bench.js TOKENIZER_JSON CORPUS.jsonl PASSES
'use strict';
const fs = require('fs');
const {Tokenizer} = require('tokenizers');
(async () => {
  const [file, corpus, passesArg] = process.argv.slice(2);
  const tok = Tokenizer.fromFile(file);
  const docs = fs.readFileSync(corpus, 'utf8').split('\n').filter((l) => l).map((l) => JSON.parse(l).text);
  const bytes = docs.reduce((n, d) => n + Buffer.byteLength(d), 0);
  const passes = Number(passesArg || 5);
  let tokens = 0;
  for (const d of docs) tokens += (await tok.encode(d, null, {addSpecialTokens: false})).getIds().length;  // warm-up
  const start = process.hrtime.bigint();
  for (let p = 0; p < passes; p++) {
    for (const d of docs) await tok.encode(d, null, {addSpecialTokens: false});
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  console.log(`hf ${(bytes * passes / seconds / 1e6).toFixed(2)} ${tokens}`);
})();
