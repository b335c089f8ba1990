"""HELM's client, HELM's retry and HELM's parallel map on the prompts; runs in HELM's interpreter::

    <helm python> helm_api_driver.py URL THREADS PROMPTS_JSONL MAX_TOKENS

prints ``{"succeeded", "requests"}`` as JSON.
"""

import json
import sys

from helm.clients.openai_client import OpenAILegacyCompletionsClient
from helm.common.cache import BlackHoleCacheConfig
from helm.common.general import parallel_map
from helm.common.request import Request
from helm.proxy.retry import retry_request

url, threads, prompts_file, max_tokens = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
with open(prompts_file, encoding="utf-8") as fh:
    prompts = [json.loads(line)["prompt"] for line in fh]
client = OpenAILegacyCompletionsClient(cache_config=BlackHoleCacheConfig(), api_key="bench", base_url=url)


@retry_request
def send(prompt):
    return client.make_request(
        Request(
            model="openai/bench",
            model_deployment="openai/bench",
            prompt=prompt,
            max_tokens=max_tokens,
            temperature=0.0,
            stop_sequences=["\n"],
        )
    )


results = parallel_map(send, prompts, parallelism=threads)
print(json.dumps({"succeeded": sum(r.success for r in results), "requests": len(results)}))
