// The GGUF peer test: LayerProof's GGUF writer and reader (peer_gguf)
// against Hugging Face's @huggingface/gguf parser. peer_gguf writes small
// synthetic models in every tensor type (F32, F16, BF16, Q8_0, Q4_0, Q4_K,
// Q6_K; llama with its q/k permutation, qwen2, qwen3, a Llama-3 RoPE-scaled
// model of mixed types) and a file of every metadata value type with
// alignment 64. For each file both readers must agree exactly on the
// version, the counts, every key's type, element type and value, and every
// tensor's name, ggml type, dimensions and absolute data offset, in file
// order; our Hugging Face-order shape must be the dimensions reversed, and
// every model file must load with ReadGgufModel. Any difference fails.
//
// Usage: node gguf_peer.mjs --modules DIR --peer BINARY --out DIR
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

function parseArgs(argv) {
  const a = {};
  for (let i = 0; i < argv.length; ++i) {
    const k = argv[i];
    if (k === '--modules') a.modules = argv[++i];
    else if (k === '--peer') a.peer = argv[++i];
    else if (k === '--out') a.out = argv[++i];
    else throw new Error(`unknown argument ${k}`);
  }
  if (!a.modules || !a.peer || !a.out) throw new Error('need --modules, --peer and --out');
  return a;
}

function run(peer, args) {
  const r = spawnSync(peer, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`${peer} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout.split('\n').filter((l) => l.length > 0);
}

// Ours prints integers as decimal strings (64-bit values survive JSON);
// theirs are numbers or bigints.
function same(ours, theirs) {
  if (Array.isArray(ours)) {
    return Array.isArray(theirs) && ours.length === theirs.length &&
      ours.every((o, i) => same(o, theirs[i]));
  }
  if (typeof ours === 'string' && typeof theirs !== 'string') return ours === String(theirs);
  if (typeof ours === 'number' && typeof theirs === 'number') return Object.is(ours, theirs);
  return ours === theirs;
}

const show = (v) => {
  const s = JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `${x}n` : x));
  return s.length > 120 ? s.slice(0, 120) + '…' : s;
};

function compareFile(file, ours, theirs, mismatches) {
  const fail = (what) => mismatches.push(`${path.basename(file)}: ${what}`);
  const [header, ...rest] = ours;
  const kvs = rest.filter((l) => 'kv' in l);
  const tensors = rest.filter((l) => 'tensor' in l);
  const model = rest.find((l) => 'model' in l);
  const { typedMetadata, tensorInfos, tensorDataOffset } = theirs;
  if (header.version !== typedMetadata.version.value) {
    fail(`version: ours ${header.version}, theirs ${typedMetadata.version.value}`);
  }
  if (String(header.tensor_count) !== String(typedMetadata.tensor_count.value)) {
    fail(`tensor_count: ours ${header.tensor_count}, theirs ${typedMetadata.tensor_count.value}`);
  }
  if (String(header.kv_count) !== String(typedMetadata.kv_count.value)) {
    fail(`kv_count: ours ${header.kv_count}, theirs ${typedMetadata.kv_count.value}`);
  }
  if (String(header.data_offset) !== String(tensorDataOffset)) {
    fail(`data section offset: ours ${header.data_offset}, theirs ${tensorDataOffset}`);
  }
  const theirKeys = Object.keys(typedMetadata).filter(
    (k) => !['version', 'tensor_count', 'kv_count'].includes(k));
  if (theirKeys.length !== kvs.length) {
    fail(`keys: ours ${kvs.length}, theirs ${theirKeys.length}`);
  }
  for (const kv of kvs) {
    const t = typedMetadata[kv.kv];
    if (!t) {
      fail(`key ${kv.kv}: theirs has no such key`);
      continue;
    }
    if (t.type !== kv.type) fail(`key ${kv.kv}: type ours ${kv.type}, theirs ${t.type}`);
    if ('subtype' in kv && t.subType !== kv.subtype) {
      fail(`key ${kv.kv}: element type ours ${kv.subtype}, theirs ${t.subType}`);
    }
    if (!same(kv.value, t.value)) {
      fail(`key ${kv.kv}: value ours ${show(kv.value)}, theirs ${show(t.value)}`);
    }
  }
  if (tensorInfos.length !== tensors.length) {
    fail(`tensors: ours ${tensors.length}, theirs ${tensorInfos.length}`);
  }
  for (let i = 0; i < Math.min(tensors.length, tensorInfos.length); ++i) {
    const o = tensors[i];
    const t = tensorInfos[i];
    const where = `tensor #${i} ${o.tensor}`;
    if (o.tensor !== t.name) fail(`${where}: name theirs ${t.name}`);
    if (o.ggml_type !== t.dtype) fail(`${where}: type ours ${o.ggml_type}, theirs ${t.dtype}`);
    if (!same(o.ne.map(String), t.shape)) fail(`${where}: ne ours ${show(o.ne)}, theirs ${show(t.shape)}`);
    if (!same([...o.ne].reverse(), o.shape)) fail(`${where}: our shape ${show(o.shape)} is not ne reversed`);
    const abs = tensorDataOffset + t.offset;
    if (String(o.offset) !== String(abs)) fail(`${where}: offset ours ${o.offset}, theirs ${abs}`);
  }
  const isModel = 'general.architecture' in typedMetadata;
  if (isModel && model.model !== 'ok') fail(`ReadGgufModel: ${model.model}`);
  return { keys: kvs.length, tensors: tensors.length };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const modules = path.join(path.resolve(args.modules), 'node_modules');
  const { gguf } = await import(path.join(modules, '@huggingface', 'gguf', 'dist', 'index.mjs'));
  const version = JSON.parse(readFileSync(path.join(modules, '@huggingface', 'gguf', 'package.json'), 'utf8')).version;
  const files = run(args.peer, ['write', args.out]);
  const mismatches = [];
  let keys = 0;
  let tensors = 0;
  for (const file of files) {
    const ours = run(args.peer, ['dump', file]).map((l) => JSON.parse(l));
    const theirs = await gguf(path.resolve(file), { allowLocalFile: true, typedMetadata: true });
    const n = compareFile(file, ours, theirs, mismatches);
    keys += n.keys;
    tensors += n.tensors;
  }
  console.log(`gguf: ${files.length} files, ${tensors} tensors, ${keys} keys ` +
              `against @huggingface/gguf ${version}: ${mismatches.length} mismatches`);
  for (const m of mismatches.slice(0, 50)) console.log(`  ${m}`);
  if (mismatches.length > 0 || files.length === 0) process.exit(1);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
