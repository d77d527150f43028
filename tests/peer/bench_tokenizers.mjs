// The Hugging Face side of scripts/bench-tokenizers.sh: tokenizers' encode
// throughput (MB/s of UTF-8 input) on the same corpus file, one thread
// (TOKENIZERS_PARALLELISM=false and RAYON_NUM_THREADS=1 are set by the
// script), through encodeBatch so that the Node binding's per-call cost is
// spread over the whole corpus. Also writes the corpus file when asked.
//
// Usage: node bench_tokenizers.mjs --modules DIR --write-corpus FILE
//        node bench_tokenizers.mjs --modules DIR --tokenizer FILE --corpus FILE [--seconds S]
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { corpus } from './corpus.mjs';

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].slice(2)] = process.argv[i + 1];
if (args['write-corpus']) {
  writeFileSync(args['write-corpus'], JSON.stringify(corpus.filter((s) => s.length > 0)));
  process.exit(0);
}
const require = createRequire(path.join(path.resolve(args.modules), 'node_modules', 'x.js'));
const { Tokenizer } = require('tokenizers');
const tok = Tokenizer.fromFile(args.tokenizer);
const strings = JSON.parse(readFileSync(args.corpus, 'utf8'));
const bytes = strings.reduce((n, s) => n + Buffer.byteLength(s, 'utf8'), 0);
const minSeconds = Number(args.seconds ?? 1);
const rates = [];
for (let pass = 0; pass < 6; ++pass) {
  const start = process.hrtime.bigint();
  let done = 0, elapsed = 0;
  do {
    await tok.encodeBatch(strings, { addSpecialTokens: true });
    done += bytes;
    elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  } while (elapsed < minSeconds / 5);
  if (pass > 0) rates.push(done / elapsed / 1e6);
}
rates.sort((a, b) => a - b);
console.log(JSON.stringify({ impl: 'hf-tokenizers', mb_per_s: Number(rates[2].toFixed(3)),
                             min: Number(rates[0].toFixed(3)), max: Number(rates[4].toFixed(3)),
                             corpus_bytes: bytes, strings: strings.length }));
