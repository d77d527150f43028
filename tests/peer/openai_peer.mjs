// The prover's OpenAI-compatible HTTP API called by the official `openai`
// npm client, unchanged: completions, chat, streams (with and without
// usage), stop sequences, a client nonce, and the error cases (401, 404,
// 400 naming the field, 413, 429). Every completion it gets, streamed or
// not, is saved with the request body and must pass `layerproof
// verify-receipt --openai-request` (the receipt binds exactly that request);
// a receipt checked against a request it does not answer must fail.
//
// Usage: node openai_peer.mjs --modules DIR --server BINARY --layerproof BINARY --out DIR
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

function parseArgs(argv) {
  const a = {};
  for (let i = 2; i < argv.length; ++i) {
    const k = argv[i];
    if (k === '--modules') a.modules = argv[++i];
    else if (k === '--server') a.server = argv[++i];
    else if (k === '--layerproof') a.layerproof = argv[++i];
    else if (k === '--out') a.out = argv[++i];
    else throw new Error(`unknown argument ${k}`);
  }
  if (!a.modules || !a.server || !a.layerproof || !a.out) {
    throw new Error('need --modules, --server, --layerproof and --out');
  }
  return a;
}

let failures = 0;
function check(cond, what) {
  if (cond) {
    console.log(`ok   ${what}`);
  } else {
    console.log(`FAIL ${what}`);
    ++failures;
  }
}

async function startServer(binary, out) {
  const child = spawn(binary, [out], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = readline.createInterface({ input: child.stdout });
  const hello = await new Promise((resolve, reject) => {
    lines.once('line', (l) => resolve(JSON.parse(l)));
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return { child, hello };
}

async function main() {
  const args = parseArgs(process.argv);
  const out = path.resolve(args.out);
  mkdirSync(out, { recursive: true });
  const modules = path.join(path.resolve(args.modules), 'node_modules');
  const { default: OpenAI } = await import(path.join(modules, 'openai', 'index.mjs'));
  const version = JSON.parse(readFileSync(path.join(modules, 'openai', 'package.json'), 'utf8')).version;
  console.log(`openai npm client ${version}`);

  const { child, hello } = await startServer(path.resolve(args.server), out);
  const baseURL = `http://127.0.0.1:${hello.port}/v1`;
  const client = new OpenAI({ baseURL, apiKey: hello.api_key, maxRetries: 0 });
  const model = hello.model;
  let saved = 0;

  // Saves the request body (and nonce) with what came back, then runs
  // verify-receipt on it; `expect` is the exit status wanted.
  function verify(name, request, response, { nonce = '', expect = 0, against = request } = {}) {
    const req = path.join(out, `${name}.request.json`);
    const resp = path.join(out, `${name}.response.json`);
    writeFileSync(req, JSON.stringify(against));
    writeFileSync(resp, JSON.stringify(response));
    const argv = ['verify-receipt', resp, '--prover-key', hello.prover_key,
      '--log-key', hello.log_key, '--openai-request', req, '--model', hello.model_dir];
    if (nonce) argv.push('--nonce', nonce);
    const r = spawnSync(args.layerproof, argv, { encoding: 'utf8' });
    check(r.status === expect,
      `${name}: verify-receipt exits ${r.status}, want ${expect}${r.status !== expect ? `: ${r.stderr.trim()}` : ''}`);
    ++saved;
  }

  // Non-stream completion, greedy.
  const greedy = { model, prompt: 'The quick brown fox', max_tokens: 24, temperature: 0 };
  const c1 = await client.completions.create(greedy);
  check(c1.id.startsWith('cmpl-') && c1.object === 'text_completion', 'completion: id and object');
  check(c1.choices.length === 1 && typeof c1.choices[0].text === 'string', 'completion: one choice with text');
  check(['stop', 'length'].includes(c1.choices[0].finish_reason), `completion: finish_reason ${c1.choices[0].finish_reason}`);
  check(c1.usage.completion_tokens >= 1 &&
    c1.usage.total_tokens === c1.usage.prompt_tokens + c1.usage.completion_tokens, 'completion: usage adds up');
  check(c1.layerproof && c1.layerproof.receipt && c1.layerproof.receipt.response, 'completion: layerproof receipt present');
  verify('completion', greedy, c1);
  // The same receipt against another prompt must fail.
  verify('completion-wrong-prompt', greedy, c1, { expect: 1, against: { ...greedy, prompt: 'The quick brown cat' } });

  // Sampled with a seed: the same request gives the same text.
  const seeded = { model, prompt: 'Once upon a time', max_tokens: 16, temperature: 0.9, top_p: 0.95, seed: 7 };
  const s1 = await client.completions.create(seeded);
  const s2 = await client.completions.create(seeded);
  check(s1.choices[0].text === s2.choices[0].text, 'seeded sampling: same seed, same text');
  verify('seeded', seeded, s1);

  // A stop sequence taken from the greedy text: the answer stops before it.
  const text = c1.choices[0].text;
  const cut = text.length > 4 ? text.slice(Math.floor(text.length / 2), Math.floor(text.length / 2) + 2) : '';
  if (cut.length === 2 && !text.slice(0, Math.floor(text.length / 2)).includes(cut)) {
    const stopped = { ...greedy, stop: [cut] };
    const c2 = await client.completions.create(stopped);
    check(c2.choices[0].finish_reason === 'stop', 'stop sequence: finish_reason stop');
    check(c2.choices[0].text === text.slice(0, text.indexOf(cut)),
      `stop sequence: text ends before ${JSON.stringify(cut)}`);
    check(c2.usage.completion_tokens <= c1.usage.completion_tokens, 'stop sequence: no tokens past the stop');
    verify('stop', stopped, c2);
  } else {
    check(false, `stop sequence: no usable stop string in ${JSON.stringify(text)}`);
  }

  // A client nonce fixes the seed through the commitment.
  const nonce = '00112233445566778899aabbccddeeff';
  const nonced = { model, prompt: 'Nonce', max_tokens: 8, temperature: 1 };
  const c3 = await client.completions.create(nonced, { headers: { 'X-LayerProof-Nonce': nonce } });
  verify('nonce', nonced, c3, { nonce });
  verify('nonce-missing', nonced, c3, { expect: 1 });

  // Chat, non-stream and streamed (with usage): the same greedy text.
  const chat = { model, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello!' }],
    max_tokens: 20, temperature: 0 };
  const m1 = await client.chat.completions.create(chat);
  check(m1.object === 'chat.completion' && m1.choices[0].message.role === 'assistant', 'chat: object and role');
  verify('chat', chat, m1);
  const streamed = { ...chat, stream: true, stream_options: { include_usage: true } };
  const stream = await client.chat.completions.create(streamed);
  let content = '';
  let last = null;
  let finish = null;
  for await (const chunk of stream) {
    for (const ch of chunk.choices) {
      if (ch.delta && ch.delta.content) content += ch.delta.content;
      if (ch.finish_reason) finish = ch.finish_reason;
    }
    last = chunk;
  }
  check(content === m1.choices[0].message.content, 'chat stream: deltas add up to the non-stream content');
  check(finish === m1.choices[0].finish_reason, 'chat stream: same finish_reason');
  check(last && last.usage && last.usage.completion_tokens === m1.usage.completion_tokens, 'chat stream: usage chunk last');
  check(last && last.layerproof, 'chat stream: receipt in the last chunk');
  verify('chat-stream', streamed, last);

  // Completion streams without usage, plain and with the stop sequence:
  // what a stream sends never runs past the stop, even when a later token
  // completes it.
  async function streamText(request) {
    let all = '';
    let lastChunk = null;
    for await (const chunk of await client.completions.create(request)) {
      all += chunk.choices.length ? chunk.choices[0].text : '';
      lastChunk = chunk;
    }
    return { all, lastChunk };
  }
  const cstream = { ...greedy, stream: true };
  const plain = await streamText(cstream);
  check(plain.all === text, 'completion stream: deltas add up to the non-stream text');
  verify('completion-stream', cstream, plain.lastChunk);
  if (cut.length === 2) {
    const sstream = { ...greedy, stream: true, stop: [cut] };
    const stopped = await streamText(sstream);
    check(stopped.all === text.slice(0, text.indexOf(cut)), 'completion stream with stop: ends before the stop');
    check(stopped.lastChunk.choices[0].finish_reason === 'stop', 'completion stream with stop: finish_reason stop');
    verify('completion-stream-stop', sstream, stopped.lastChunk);
  }

  // Errors.
  async function expectError(what, status, promise, field) {
    try {
      await promise;
      check(false, `${what}: no error`);
    } catch (e) {
      check(e.status === status, `${what}: status ${e.status}, want ${status}`);
      if (field) check(e.param === field || (e.error && e.error.param === field), `${what}: param ${field}`);
    }
  }
  const stranger = new OpenAI({ baseURL, apiKey: 'sk-wrong', maxRetries: 0 });
  await expectError('wrong API key', 401, stranger.completions.create(greedy));
  await expectError('unknown model', 404, client.completions.create({ ...greedy, model: 'gpt-4' }));
  await expectError('temperature out of range', 400, client.completions.create({ ...greedy, temperature: 5 }), 'temperature');
  await expectError('n = 2', 400, client.completions.create({ ...greedy, n: 2 }), 'n');
  await expectError('unknown field', 400, client.completions.create({ ...greedy, frobnicate: 1 }), 'frobnicate');
  await expectError('body over the limit', 413, client.completions.create({ ...greedy, prompt: 'x'.repeat(70000) }));
  // More completions at once than this client may have in flight: some
  // are refused with 429, the others complete.
  const burst = await Promise.allSettled(Array.from({ length: 6 }, () =>
    client.completions.create({ ...greedy, max_tokens: 200 })));
  const limited = burst.filter((r) => r.status === 'rejected' && r.reason.status === 429).length;
  const served = burst.filter((r) => r.status === 'fulfilled').length;
  check(limited >= 1 && served >= 1 && limited + served === 6, `burst of 6: ${served} served, ${limited} refused with 429`);
  const models = await client.models.list();
  check(models.data.length === 1 && models.data[0].id === model, 'models: lists the served model');

  child.stdin.end();
  await new Promise((resolve) => child.once('exit', resolve));
  console.log(`openai peer: ${saved} receipts checked, ${failures} failures`);
  if (failures > 0) process.exit(1);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
