"""The floor client: plain ``http.client`` on a fixed number of threads, nothing else::

    python floor_driver.py URL THREADS PROMPTS_JSONL MAX_TOKENS

prints how many requests were answered; exit 1 when any was refused.
"""

import http.client
import json
import sys
import threading
import urllib.parse

url, threads, prompts_path, max_tokens = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
parts = urllib.parse.urlsplit(url)
with open(prompts_path, encoding="utf-8") as fh:
    prompts = [json.loads(line)["prompt"] for line in fh]
failed = []


def worker(mine):
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    for prompt in mine:
        body = json.dumps({"model": "bench", "prompt": prompt, "max_tokens": max_tokens, "temperature": 0})
        conn.request("POST", parts.path + "/completions", body, {"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        if response.status != 200:
            failed.append(response.status)
        if response.getheader("Connection", "").lower() == "close" or response.version == 10:
            conn.close()
            conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)


pool = [threading.Thread(target=worker, args=(prompts[k::threads],)) for k in range(threads)]
for t in pool:
    t.start()
for t in pool:
    t.join()
print(f"floor: {len(prompts) - len(failed)} answered, {len(failed)} refused")
sys.exit(1 if failed else 0)
