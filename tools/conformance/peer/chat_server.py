"""An OpenAI-compatible chat server (``POST /v1/chat/completions``) for a local Hugging Face model,
run by a peer's interpreter (one with torch and transformers): the model inspect_ai evaluates
through its ``openai-api`` provider when it has no ``hf`` provider of its own to use offline.

Greedy decoding only (``temperature`` 0), on 127.0.0.1, one request at a time; it stops by itself
after ``--idle`` seconds without a request. Usage: ``python chat_server.py MODEL_DIR PORT_FILE``;
the port it listens on is written to PORT_FILE once the model is loaded.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

MAX_BODY = 1 << 20
"""Largest request body read (bytes)."""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("port_file", type=Path)
    ap.add_argument("--idle", type=float, default=120.0)
    ap.add_argument("--max-tokens", type=int, default=64)
    args = ap.parse_args()
    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    model.eval()
    last = [time.monotonic()]
    name = Path(args.model).name

    def complete(body: dict[str, Any]) -> dict[str, Any]:
        messages = [{"role": m["role"], "content": _text(m.get("content"))} for m in body["messages"]]
        ids = tok.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt", return_dict=True)
        limit = min(int(body.get("max_tokens") or body.get("max_completion_tokens") or args.max_tokens), 256)
        with torch.no_grad():
            out = model.generate(**ids, max_new_tokens=limit, do_sample=False, pad_token_id=tok.eos_token_id)
        prompt_len = ids["input_ids"].shape[1]
        new = out[0, prompt_len:].tolist()
        stopped = bool(new) and new[-1] == tok.eos_token_id
        text = tok.decode(new, skip_special_tokens=True)
        return {
            "id": f"chatcmpl-{int(time.time() * 1000)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", name),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop" if stopped else "length",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_len,
                "completion_tokens": len(new),
                "total_tokens": prompt_len + len(new),
            },
        }

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a: Any) -> None:
            pass

        def _send(self, code: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            last[0] = time.monotonic()
            self._send(200, {"object": "list", "data": [{"id": name, "object": "model"}]})

        def do_POST(self) -> None:
            last[0] = time.monotonic()
            size = int(self.headers.get("Content-Length") or 0)
            if not self.path.endswith("/chat/completions") or size > MAX_BODY:
                self._send(404, {"error": {"message": f"not served: {self.path}"}})
                return
            try:
                body = json.loads(self.rfile.read(size))
                self._send(200, complete(body))
            except Exception as exc:  # a bad request is answered, never kills the server
                self._send(400, {"error": {"message": f"{type(exc).__name__}: {exc}"}})
            last[0] = time.monotonic()

    server = HTTPServer(("127.0.0.1", 0), Handler)

    def watchdog() -> None:
        while time.monotonic() - last[0] < args.idle:
            time.sleep(1)
        server.shutdown()

    threading.Thread(target=watchdog, daemon=True).start()
    args.port_file.write_text(str(server.server_address[1]))
    server.serve_forever()


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


if __name__ == "__main__":
    main()
