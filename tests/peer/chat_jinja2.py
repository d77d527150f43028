#!/usr/bin/env python3
"""Renders chat templates with Jinja2 set up as transformers sets it up.

The chat-template peer test's second reference (tests/peer/chat_peer.mjs):
Python's Jinja2 (Debian's python3-jinja2), the engine transformers'
apply_chat_template runs, in a sandboxed environment with trim_blocks,
lstrip_blocks and the loop controls, json.dumps as tojson (ensure_ascii
off), raise_exception and strftime_now as globals. The clock is the
request's "now" (UTC), so both sides format the same date.

Reads JSON Lines requests (as peer_text chat) on stdin and answers each
with {"text": ...} or {"error": ...}.
Usage: chat_jinja2.py TEMPLATE_FILE
"""
import datetime
import json
import sys

import jinja2
import jinja2.ext
import jinja2.sandbox


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        source = f.read()
    now = [0]

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent,
                          separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return datetime.datetime.fromtimestamp(now[0], datetime.timezone.utc).strftime(fmt)

    env = jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    template = env.from_string(source)
    for line in sys.stdin:
        req = json.loads(line)
        now[0] = req.get("now", 0)
        variables = dict(req.get("special_tokens", {}))
        variables.update(messages=req["messages"], tools=req.get("tools"), documents=None,
                         add_generation_prompt=req.get("add_generation_prompt", False))
        variables.update(req.get("extra", {}))
        try:
            out = {"text": template.render(**variables)}
        except Exception as e:  # Every failure is an answer, as on our side.
            out = {"error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
