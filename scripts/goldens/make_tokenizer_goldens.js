#!/usr/bin/env node
// Makes the tokenizer ids goldens in tests/data/tokenizer/ with HF's own Rust tokenizers library (npm
// `tokenizers@0.23.2`, prebuilt native binaries), the reference the C++ tokenizer must match exactly.
//
//   mkdir -p /tmp/tok-oracle && (cd /tmp/tok-oracle && npm install tokenizers@0.23.2)
//   NODE_PATH=/tmp/tok-oracle/node_modules node scripts/goldens/make_tokenizer_goldens.js [ASSET_DIR]
//
// ASSET_DIR defaults to .cache/assets (scripts/fetch_assets.sh). For each tokenizer it writes
//   <name>_encode.jsonl  {"text", "ids" (add_special_tokens=false), "ids_special" (=true; for Llama and
//                         Gemma tokenizer classes with transformers' update_post_processor rule: BOS/EOS
//                         from add_bos_token/add_eos_token around the ids)}
//   <name>_decode.jsonl  {"ids", "skip_special_tokens", "raw" (Rust decode), "text" (transformers'
//                         decode: raw + clean_up_tokenization when tokenizer_config.json asks for it)}
// and, for the variants in variants/<name>.json (a real file with some components replaced, or a small
// synthetic SentencePiece-style tokenizer), the same two files on a part of the corpus.
// The corpus is generated from a fixed seed, so re-running gives the same files.
'use strict';
const fs = require('fs');
const path = require('path');
const {Tokenizer} = require('tokenizers');

const root = path.resolve(__dirname, '..', '..');
const assets = path.resolve(process.argv[2] || path.join(root, '.cache', 'assets'));
const outDir = path.join(root, 'tests', 'data', 'tokenizer');

// --- deterministic PRNG (mulberry32) ---
function rng(seed) {
  return () => {
    seed |= 0; seed = (seed + 0x6D2B79F5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// --- the corpus ---
const FIXED = [
  '', ' ', '  ', '\n', '\t', 'a', 'Hello, my dog is cute', 'Hello world', ' Hello world', 'hello  world ',
  "I'm here, you're there, they've gone, she'll come, he'd know, it's fine, don't", "I'M HERE, YOU'RE THERE, DON'T",
  "'s 't 're 've 'm 'll 'd", "rock'n'roll", "l'été dernier", 'naïve café résumé', 'Ünïcödé', '你好世界', '你好，世界！',
  'こんにちは世界', '안녕하세요 세계', 'Привет, мир!', 'Γειά σου Κόσμε', 'مرحبا بالعالم', 'שלום עולם', 'नमस्ते दुनिया',
  'สวัสดีชาวโลก', '1234567890', '3.14159265358979', '1,000,000', '2026-11-23T10:58:16Z', 'x = 42; y = x ** 2',
  'def f(x):\n    return x + 1\n', '    indented\n\tTabbed\n', 'a\r\nb\r\n\r\nc', 'trailing spaces   ', '   leading',
  '\u00a0non-breaking\u00a0space', 'ideographic\u3000space', 'line\u2028separator', 'next\u0085line',
  '😀', '👍🏽', '👨‍👩‍👧‍👦', '🇫🇷🇯🇵', '1️⃣', '❤️', '🏳️‍🌈', '$\\frac{a}{b} + \\sqrt{x^2}$', '∀x∈ℝ: x² ≥ 0',
  'e\u0301', '\u00e9', 'A\u030a', '\u1100\u1161\u11a8', 'ﬁ ligature', 'ｆｕｌｌｗｉｄｔｈ', '①②③', 'Ⅻ',
  'ſ', "'ſ", 'K', '\u200b\u200c\u200d', '\ufeffBOM', 'tab\there', '!!!???...', '<html><body>x</body></html>',
  // Words longer than the 256-byte word cache holds, and long runs BPE must merge in many steps.
  ' '.repeat(1000), 'a'.repeat(700), 'ab'.repeat(400), '你'.repeat(300), '🙂'.repeat(100), '7'.repeat(500),
  '\n'.repeat(300), '\t '.repeat(200), '='.repeat(600), 'x' + ' '.repeat(257) + 'y', 'Straße'.repeat(60),
  // Characters new in Unicode 15 (PCRE2 10.42 knows Unicode 14): CJK Ext H, Kawi, emoji, Nag Mundari.
  'a\u{31350}\u{31351}b', 'x \u{11F04}\u{11F05} y', 'hi \u{1FAE8} there', 'ab\u{1E4D0}\u{1E4D1}', 'q \u{0CF3}',
  '{"key": "value", "n": [1, 2, 3]}', 'SELECT * FROM t WHERE id = 1;', 'https://example.com/path?q=1&r=2#frag',
  'user@example.com', '#include <vector>\nint main() { return 0; }', '\n\n\n', ' \n \n ', '\t\t\t', '          ',
];

const WORDS = {
  en: ['the', 'quick', 'brown', 'fox', 'jumps', 'over', 'lazy', 'dog', 'Tokenizer', 'reinforcement', 'learning',
       'policy', 'gradient', 'reward', 'model', "isn't", "we'll", 'HELLO', 'World', 'A', 'I', 'GPU', 'iPhone'],
  zh: ['我们', '模型', '训练', '强化学习', '的', '是', '一个', '数学', '问题', '答案', '中华人民共和国', '。', '，'],
  ja: ['これは', 'テスト', 'です', '日本語', 'カタカナ', 'ひらがな', '東京', '。'],
  ko: ['한국어', '토크나이저', '테스트', '입니다', '서울'],
  ru: ['Москва', 'привет', 'модель', 'обучение', 'ЁЖИК', 'съешь'],
  el: ['αβγ', 'Ελλάδα', 'λόγος', 'ΣΊΣΥΦΟΣ'],
  ar: ['العربية', 'كتاب', 'مدرسة', 'السلام'],
  he: ['עברית', 'ספר', 'ילד'],
  hi: ['हिन्दी', 'भाषा', 'विद्यालय', 'क्षत्रिय'],
  th: ['ภาษาไทย', 'สวัสดี', 'ครับ'],
  vi: ['Tiếng', 'Việt', 'người', 'được'],
  de: ['Straße', 'Größe', 'Übermäßig', 'Fußgängerübergänge'],
  emoji: ['😀', '😂', '🥲', '👍', '👍🏿', '👩‍💻', '👨‍👩‍👧', '🇺🇸', '🇩🇪', '#️⃣', '✌️', '🫠', '🧑🏽‍🚀', '🐍', '🦀', '⭐', '☕'],
  math: ['∑', '∫', '√', 'π', '≈', '≠', '≤', '∞', 'α', 'β', '\\alpha', '\\int_0^1', 'x^{2}', '\\frac{1}{2}', '\\boxed{42}',
         '$', '$$', '\\(', '\\)', '+', '-', '*', '/', '=', '^', '_', '{', '}'],
  code: ['def', 'return', 'if', 'else:', 'for i in range(10):', '==', '!=', '->', '=>', '::', '++', '&&', '||', '();',
         'std::vector<int>', 'self.x', '#', '//', '/*', '*/', '"""', "''", '``', '[]', '{}', '0x1F', '1e-6', '__init__'],
  punct: ['.', ',', '!', '?', ';', ':', '...', '—', '–', '"', "'", '(', ')', '«', '»', '“', '”', '‘', '’', '、', '！'],
};
const SPACES = [' ', ' ', ' ', ' ', '  ', '\n', '\t', '\n\n', '\r\n', '   ', '\u00a0', '\u3000', ' \n', '\n  ', '\t\t'];

function pick(r, list) { return list[Math.floor(r() * list.length)]; }

function randomCodepointString(r, n) {
  const blocks = [[0x20, 0x7e], [0xa0, 0x24f], [0x370, 0x3ff], [0x400, 0x4ff], [0x590, 0x6ff], [0x900, 0x97f],
                  [0xe00, 0xe7f], [0x1100, 0x11ff], [0x2000, 0x206f], [0x2100, 0x22ff], [0x3040, 0x30ff],
                  [0x4e00, 0x9fff], [0xac00, 0xd7a3], [0xff00, 0xffef], [0x1f300, 0x1f5ff], [0x1f900, 0x1f9ff],
                  [0x300, 0x36f], [0x1d400, 0x1d7ff]];
  let s = '';
  for (let i = 0; i < n; i++) {
    const [lo, hi] = pick(r, blocks);
    s += String.fromCodePoint(lo + Math.floor(r() * (hi - lo + 1)));
  }
  return s;
}

function makeCorpus(specialTokens, seed) {
  const r = rng(seed);
  const out = FIXED.slice();
  const langs = Object.keys(WORDS);
  const add = (s) => out.push(s);
  // Sentences of one language, then of mixed languages.
  for (let i = 0; i < 500; i++) {
    const mixed = i % 2 === 1;
    let lang = pick(r, langs), s = '';
    const n = 1 + Math.floor(r() * 14);
    for (let k = 0; k < n; k++) {
      if (mixed) lang = pick(r, langs);
      s += pick(r, WORDS[lang]);
      if (r() < 0.8) s += r() < 0.85 ? ' ' : pick(r, SPACES);
    }
    add(s);
  }
  // NFC / NFD / NFKC forms of accented and Hangul text.
  for (let i = 0; i < 150; i++) {
    const base = pick(r, [...WORDS.de, ...WORDS.vi, ...WORDS.ko, 'café', 'naïve', 'Ångström', 'ñandú', 'São Paulo',
                          'Ελληνικά', 'ﬁnal', '①', 'Ｈｅｌｌｏ']);
    add(base.normalize(pick(r, ['NFC', 'NFD', 'NFKC', 'NFKD'])) + pick(r, ['', ' ', ' x', '\n']));
  }
  // Emoji sequences.
  for (let i = 0; i < 150; i++) {
    let s = '';
    const n = 1 + Math.floor(r() * 8);
    for (let k = 0; k < n; k++) s += pick(r, WORDS.emoji) + (r() < 0.3 ? pick(r, [' ', '', 'ok', '!']) : '');
    add(s);
  }
  // Code.
  for (let i = 0; i < 200; i++) {
    let s = '';
    const lines = 1 + Math.floor(r() * 6);
    for (let l = 0; l < lines; l++) {
      s += ' '.repeat(Math.floor(r() * 3) * 4) + (r() < 0.1 ? '\t' : '');
      const n = 1 + Math.floor(r() * 6);
      for (let k = 0; k < n; k++) s += pick(r, WORDS.code) + (r() < 0.6 ? ' ' : '');
      s += r() < 0.2 ? '\r\n' : '\n';
    }
    add(s);
  }
  // Math.
  for (let i = 0; i < 150; i++) {
    let s = '';
    const n = 2 + Math.floor(r() * 12);
    for (let k = 0; k < n; k++) {
      s += r() < 0.3 ? String(Math.floor(r() * 100000) / (r() < 0.5 ? 1 : 100)) : pick(r, WORDS.math);
      if (r() < 0.5) s += ' ';
    }
    add(s);
  }
  // Digit runs, alone and inside text.
  for (let i = 0; i < 150; i++) {
    let d = '';
    const n = 1 + Math.floor(r() * 40);
    for (let k = 0; k < n; k++) d += String(Math.floor(r() * 10));
    add(pick(r, ['', 'x', ' ', 'abc', '$', '-', '№']) + d + pick(r, ['', ' ', '.5', 'th', 'km', ',000', '٣٤']));
  }
  // Whitespace runs.
  for (let i = 0; i < 150; i++) {
    let s = '';
    const n = 1 + Math.floor(r() * 8);
    for (let k = 0; k < n; k++) {
      s += pick(r, SPACES).repeat(1 + Math.floor(r() * 5));
      if (r() < 0.6) s += pick(r, [...WORDS.en, ...WORDS.punct, ...WORDS.zh]);
    }
    add(s);
  }
  // Special tokens inside text, whole and broken.
  for (let i = 0; i < 250; i++) {
    let s = '';
    const n = 1 + Math.floor(r() * 6);
    for (let k = 0; k < n; k++) {
      const t = pick(r, specialTokens);
      const piece = r() < 0.15 ? t.slice(0, Math.max(1, t.length - 1 - Math.floor(r() * 3))) : t;
      s += pick(r, ['', ' ', '\n', 'x', ' hi ', '你好']) + piece + pick(r, ['', ' ', '\n', 'y', '.', '  ']);
      if (r() < 0.5) s += pick(r, WORDS[pick(r, langs)]);
    }
    add(s);
  }
  // Random code points from many blocks (combining marks, math alphanumerics, CJK, emoji, ...).
  for (let i = 0; i < 250; i++) add(randomCodepointString(r, 1 + Math.floor(r() * 30)));
  // Punctuation runs and ASCII noise.
  for (let i = 0; i < 100; i++) {
    let s = '';
    const n = 1 + Math.floor(r() * 30);
    for (let k = 0; k < n; k++) s += String.fromCharCode(32 + Math.floor(r() * 95));
    add(s);
  }
  // A few long texts.
  for (let i = 0; i < 12; i++) {
    let s = '';
    while (s.length < 3000) s += out[Math.floor(r() * out.length)] + pick(r, SPACES);
    add(s);
  }
  return out;
}

// transformers' PreTrainedTokenizerBase.clean_up_tokenization.
function cleanUp(s) {
  return s.split(' .').join('.').split(' ?').join('?').split(' !').join('!').split(' ,').join(',')
      .split(" ' ").join("'").split(" n't").join("n't").split(" 'm").join("'m").split(" 's").join("'s")
      .split(" 've").join("'ve").split(" 're").join("'re");
}

function gpt2TokenizerJson(dir) {
  // The tokenizer.json HF ships for `gpt2`, built from OpenAI's encoder.json + vocab.bpe.
  const vocab = JSON.parse(fs.readFileSync(path.join(dir, 'encoder.json'), 'utf8'));
  const merges = fs.readFileSync(path.join(dir, 'vocab.bpe'), 'utf8').split('\n')
      .filter((l, i) => !(i === 0 && l.startsWith('#version')) && l.length > 0);
  const byteLevel = {type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true};
  return JSON.stringify({
    version: '1.0', truncation: null, padding: null,
    added_tokens: [{id: 50256, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false,
                    normalized: true, special: true}],
    normalizer: null, pre_tokenizer: byteLevel, post_processor: byteLevel, decoder: byteLevel,
    model: {type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '',
            fuse_unk: false, byte_fallback: false, vocab, merges},
  });
}

// Strings aimed at the variants' added-token flags and components.
const VARIANT_EXTRA = [
  'a <mask> b', 'a    <mask>', 'x\n\t<mask>', '<mask><mask>', '[SEP]   x', '[SEP]\n\ny', 'cat', 'concat cat cats',
  ' cat ', 'the cat_', 'cat.', '(cat)', 'Cafe\u0301 Café', 'CAFÉ café', 'x the end y', 'the end', 'and the end',
  'ﬁve ①② Ｈｅｌｌｏ', '  Strip me  ', '``quoted``', '2026 is 12345678 ٣٤٥', 'end.\nNext, line!\r\nmore',
  '中文，标点。English, too.', 'hello world', 'x \u{11F04}\u{11F05} y', 'hi \u{1FAE8} there', 'a\u{31350}b 1\u{11F50}2',
  '。 \u{3002}x', 'カタカナ。', ' hello  world ', 'Hello, my dog is cute', '🦀 byte fallback 🫠', '\t',
];

// transformers' LlamaTokenizerFast / GemmaTokenizerFast replace the post-processor (update_post_processor).
function transformersSpecials(tok, cfg) {
  const cls = (cfg.tokenizer_class || '').replace(/Fast$/, '');
  if (!['LlamaTokenizer', 'GemmaTokenizer', 'CodeLlamaTokenizer'].includes(cls)) return null;
  const content = (t) => (typeof t === 'string' ? t : t && t.content);
  const bos = cfg.add_bos_token !== false ? [tok.tokenToId(content(cfg.bos_token))] : [];
  const eos = cfg.add_eos_token === true ? [tok.tokenToId(content(cfg.eos_token))] : [];
  return (ids) => bos.concat(ids, eos);
}

async function makeGoldens(name, tok, specialTokens, cleanup, seed, limit = Infinity, wrap = null) {
  let corpus = makeCorpus(specialTokens, seed).filter((_, i) => i % Math.ceil(2137 / Math.min(limit, 2137)) === 0);
  if (limit !== Infinity) corpus = VARIANT_EXTRA.concat(corpus);
  const enc = [];
  const dec = [];
  const r = rng(seed + 1);
  const vocabSize = tok.getVocabSize(true);
  const decodeLine = async (ids, skip) => {
    const raw = await tok.decode(ids, skip);
    return JSON.stringify({ids, skip_special_tokens: skip, raw, text: cleanup ? cleanUp(raw) : raw});
  };
  for (const text of corpus) {
    const ids = Array.from((await tok.encode(text, null, {addSpecialTokens: false})).getIds());
    const idsSpecial = wrap ? wrap(ids) : Array.from((await tok.encode(text, null, {addSpecialTokens: true})).getIds());
    enc.push(JSON.stringify({text, ids, ids_special: idsSpecial}));
    if (enc.length % 3 === 0) dec.push(await decodeLine(ids, r() < 0.5));
    // Prefixes cut inside multi-byte characters.
    if (enc.length % 7 === 0 && ids.length > 1) dec.push(await decodeLine(ids.slice(0, 1 + Math.floor(r() * (ids.length - 1))), false));
  }
  for (let i = 0; i < Math.min(400, limit); i++) {  // random id sequences, special tokens included
    const n = 1 + Math.floor(r() * 12);
    const ids = [];
    for (let k = 0; k < n; k++) ids.push(Math.floor(r() * vocabSize));
    dec.push(await decodeLine(ids, r() < 0.5));
  }
  fs.writeFileSync(path.join(outDir, `${name}_encode.jsonl`), enc.join('\n') + '\n');
  fs.writeFileSync(path.join(outDir, `${name}_decode.jsonl`), dec.join('\n') + '\n');
  console.log(`${name}: ${enc.length} encode, ${dec.length} decode goldens (vocab ${vocabSize})`);
}

(async () => {
  fs.mkdirSync(outDir, {recursive: true});
  for (const [name, dir, seed] of [['qwen3', 'tokenizer-qwen3', 1001], ['llama3', 'tokenizer-llama3', 2002]]) {
    const tok = Tokenizer.fromFile(path.join(assets, dir, 'tokenizer.json'));
    const tj = JSON.parse(fs.readFileSync(path.join(assets, dir, 'tokenizer.json'), 'utf8'));
    const cfg = JSON.parse(fs.readFileSync(path.join(assets, dir, 'tokenizer_config.json'), 'utf8'));
    const specials = tj.added_tokens.map((t) => t.content).slice(0, 40);
    await makeGoldens(name, tok, specials, cfg.clean_up_tokenization_spaces === true, seed);
  }
  const gpt2 = Tokenizer.fromString(gpt2TokenizerJson(path.join(assets, 'gpt2')));
  await makeGoldens('gpt2', gpt2, ['<|endoftext|>'], false, 3003);
  // More real formats, on a part of the corpus: DeepSeek-V3 (three Split regexes), Gemma 3
  // (SentencePiece-style BPE with byte fallback), GPT-4o (o200k, an inverted Removed split).
  for (const [name, dir, seed] of [['deepseek_v3', 'tokenizer-deepseek-v3', 5005], ['gemma3', 'tokenizer-gemma3', 6006],
                                   ['gpt4o', 'tokenizer-gpt4o', 7007]]) {
    const tok = Tokenizer.fromFile(path.join(assets, dir, 'tokenizer.json'));
    const tj = JSON.parse(fs.readFileSync(path.join(assets, dir, 'tokenizer.json'), 'utf8'));
    const cfg = JSON.parse(fs.readFileSync(path.join(assets, dir, 'tokenizer_config.json'), 'utf8'));
    const specials = tj.added_tokens.map((t) => t.content).slice(0, 40);
    await makeGoldens(name, tok, specials, cfg.clean_up_tokenization_spaces === true, seed, 700,
                      transformersSpecials(tok, cfg));
  }

  const variantDir = path.join(outDir, 'variants');
  fs.mkdirSync(variantDir, {recursive: true});
  let seed = 4004;
  for (const [name, variant] of Object.entries(variants())) {
    fs.writeFileSync(path.join(variantDir, `${name}.json`), JSON.stringify(variant, null, 1) + '\n');
    const tj = variant.base ? JSON.parse(fs.readFileSync(path.join(assets, variant.base, 'tokenizer.json'), 'utf8'))
                            : variant.tokenizer;
    Object.assign(tj, variant.patch || {});
    const tok = Tokenizer.fromString(JSON.stringify(tj));
    await makeGoldens(`variants/${name}`, tok, tj.added_tokens.map((t) => t.content).slice(0, 40), false, seed++, 300);
  }
})();

// Real files with components replaced, so that every normalizer, pre-tokenizer, post-processor,
// decoder and added-token flag vime supports is checked against HF.
function variants() {
  const byteLevel = (prefix, regex) => ({type: 'ByteLevel', add_prefix_space: prefix, trim_offsets: false, use_regex: regex});
  const llama3Added = JSON.parse(fs.readFileSync(path.join(assets, 'tokenizer-llama3', 'tokenizer.json'), 'utf8'))
      .added_tokens.slice(0, 8);
  const qwen3Added = JSON.parse(fs.readFileSync(path.join(assets, 'tokenizer-qwen3', 'tokenizer.json'), 'utf8'))
      .added_tokens;
  const added = (id, content, flags) => Object.assign(
      {id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: false}, flags);
  return {
    // Meta's own Llama-3 post-processor: BOS under add_special_tokens.
    llama3_bos: {base: 'tokenizer-llama3', patch: {post_processor: {type: 'Sequence', processors: [
      byteLevel(true, true),
      {type: 'TemplateProcessing',
       single: [{SpecialToken: {id: '<|begin_of_text|>', type_id: 0}}, {Sequence: {id: 'A', type_id: 0}}],
       pair: [{SpecialToken: {id: '<|begin_of_text|>', type_id: 0}}, {Sequence: {id: 'A', type_id: 0}},
              {SpecialToken: {id: '<|begin_of_text|>', type_id: 1}}, {Sequence: {id: 'B', type_id: 1}}],
       special_tokens: {'<|begin_of_text|>': {id: '<|begin_of_text|>', ids: [128000], tokens: ['<|begin_of_text|>']}}}]}}},
    // Added-token flags: lstrip, rstrip, single_word, normalized (matched after NFC), non-special.
    qwen3_added_flags: {base: 'tokenizer-qwen3', patch: {added_tokens: qwen3Added.concat([
      added(151669, '<mask>', {lstrip: true, special: true}),
      added(151670, '[SEP]', {rstrip: true, special: true}),
      added(151671, 'cat', {single_word: true}),
      added(151672, 'Café', {normalized: true}),
      added(151673, ' the end', {}),
    ])}},
    // Normalizers, Digits, ByteLevel with prefix space and its own regex, Bert-style post-processor.
    llama3_normalizers_digits: {base: 'tokenizer-llama3', patch: {
      normalizer: {type: 'Sequence', normalizers: [{type: 'NFKC'}, {type: 'Lowercase'}, {type: 'Strip', strip_left: true, strip_right: true},
                                                   {type: 'Replace', pattern: {String: '``'}, content: '"'}]},
      pre_tokenizer: {type: 'Sequence', pretokenizers: [{type: 'Digits', individual_digits: false}, byteLevel(true, true)]},
      post_processor: {type: 'BertProcessing', sep: ['<|end_of_text|>', 128001], cls: ['<|begin_of_text|>', 128000]},
      added_tokens: llama3Added}},
    // Split behaviours other than Isolated, inverted splits, NFD, individual digits.
    llama3_split_behaviors: {base: 'tokenizer-llama3', patch: {
      normalizer: {type: 'NFD'},
      pre_tokenizer: {type: 'Sequence', pretokenizers: [
        {type: 'Split', pattern: {String: ' '}, behavior: 'MergedWithNext', invert: false},
        {type: 'Split', pattern: {Regex: '\\p{P}+'}, behavior: 'MergedWithPrevious', invert: false},
        {type: 'Split', pattern: {Regex: '[\\r\\n]+'}, behavior: 'Removed', invert: false},
        {type: 'Split', pattern: {Regex: '\\p{Han}+'}, behavior: 'Contiguous', invert: true},
        {type: 'Digits', individual_digits: true}, byteLevel(false, false)]},
      added_tokens: llama3Added}},
    // SentencePiece-style BPE as Llama-2 / Mistral write it: normalizer-made '▁', byte fallback, unk.
    spm_byte_fallback: {tokenizer: spmTokenizer('normalizer')},
    // The same vocabulary with the newer Metaspace pre-tokenizer and decoder.
    spm_metaspace: {tokenizer: spmTokenizer('metaspace')},
  };
}

// A small SentencePiece-style BPE built from a word list: <unk> <s> </s>, 256 byte tokens, characters,
// and chained merges for each word.
function spmTokenizer(style) {
  const vocab = {'<unk>': 0, '<s>': 1, '</s>': 2};
  for (let b = 0; b < 256; b++) vocab[`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`] = Object.keys(vocab).length;
  const add = (t) => { if (!(t in vocab)) vocab[t] = Object.keys(vocab).length; };
  const words = [...WORDS.en, ...WORDS.de, ...WORDS.ru, ...WORDS.zh, ...WORDS.code, ...WORDS.math, 'hello', 'world',
                 'Hello', 'my', 'is', 'cute', 'and', 'of', 'to', 'in', 'that', 'it', 'for', 'you', 'with'];
  for (const w of words) for (const ch of '\u2581' + w) add(ch);
  for (const ch of ' abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,!?;:\'"()[]{}-_+=*/\\<>@#$%^&|~`') add(ch === ' ' ? '\u2581' : ch);
  const merges = [];
  const seen = new Set();
  for (const w of words) {
    const chars = Array.from('\u2581' + w.replace(/ /g, '\u2581'));
    let left = chars[0];
    for (let i = 1; i < chars.length; i++) {
      const merged = left + chars[i];
      if (!seen.has(merged)) { seen.add(merged); merges.push([left, chars[i]]); add(merged); }
      left = merged;
    }
  }
  const special = (id, content) => ({id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true});
  const metaspace = style === 'metaspace';
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [special(0, '<unk>'), special(1, '<s>'), special(2, '</s>')],
    normalizer: metaspace ? null : {type: 'Sequence', normalizers: [{type: 'Prepend', prepend: '\u2581'},
                                                                    {type: 'Replace', pattern: {String: ' '}, content: '\u2581'}]},
    pre_tokenizer: metaspace ? {type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'first', split: false} : null,
    post_processor: {type: 'TemplateProcessing',
                     single: [{SpecialToken: {id: '<s>', type_id: 0}}, {Sequence: {id: 'A', type_id: 0}}],
                     pair: [{SpecialToken: {id: '<s>', type_id: 0}}, {Sequence: {id: 'A', type_id: 0}},
                            {SpecialToken: {id: '<s>', type_id: 1}}, {Sequence: {id: 'B', type_id: 1}}],
                     special_tokens: {'<s>': {id: '<s>', ids: [1], tokens: ['<s>']}}},
    decoder: metaspace ? {type: 'Sequence', decoders: [{type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'first', split: false},
                                                       {type: 'ByteFallback'}, {type: 'Fuse'}]}
                       : {type: 'Sequence', decoders: [{type: 'Replace', pattern: {String: '\u2581'}, content: ' '},
                                                       {type: 'ByteFallback'}, {type: 'Fuse'},
                                                       {type: 'Strip', content: ' ', start: 1, stop: 0}]},
    model: {type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null,
            fuse_unk: true, byte_fallback: true, ignore_merges: false, vocab, merges},
  };
}
