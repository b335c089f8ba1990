"""Files the harness writes in the authors' formats for the summarization scenarios (CNN/DailyMail,
XSum), and from the same records the preprocessed pickle HELM reads."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tools.conformance.helm.authored_qa import NAMES, OBJECTS, PLACES

_VERBS = ("found", "repaired", "sold", "returned", "painted", "stolen")


def _sentences(n: int, seed: int) -> list[str]:
    """``n`` news sentences of 11 to 15 words, from the harness's names, places and objects."""
    out = []
    for k in range(n):
        m = seed * 31 + k
        hero, place, thing = NAMES[m % len(NAMES)], PLACES[(m // 3) % len(PLACES)], OBJECTS[(m // 7) % len(OBJECTS)]
        out.append(f"{hero} said the {thing} was {_VERBS[m % len(_VERBS)]} in {place} on day {m % 28 + 1} this year.")
    return out


def _paragraphs(words: int, seed: int) -> list[str]:
    """An article of about ``words`` words in paragraphs of two or three sentences; every
    fourth paragraph is a caption without a final period (as the stories' image captions
    are), one carries runs of spaces and a tab."""
    paragraphs: list[str] = []
    count, k = 0, 0
    while count < words:
        if k % 4 == 3:
            text = (
                f"{NAMES[(seed + k) % len(NAMES)]} holds the {OBJECTS[k % len(OBJECTS)]} in {PLACES[k % len(PLACES)]}"
            )
        else:
            text = " ".join(_sentences(2 + k % 2, seed * 7 + k))
        if k == 1:
            text = text.replace(" said ", "  said\t", 1)
        paragraphs.append(text)
        count += len(text.split())
        k += 1
    return paragraphs


_CNN_WORDS = {
    "train": (30, 60, 90, 120, 140, 170, 80, 45, 55, 100, 210, 130),
    "validation": (200, 400, 650, 90),
    "test": (150, 300, 520, 700, 250, 90, 60, 350),
}
"""Article lengths in words: training articles on both sides of HELM's 50-150 word pool, and
articles longer than its 512-word cut."""


def _cnn_records() -> list[tuple[str, str, list[str], list[str]]]:
    """(split, URL, paragraphs, highlights) of every story the harness writes, in list order."""
    records = []
    for split, lengths in _CNN_WORDS.items():
        for i, words in enumerate(lengths):
            seed = 100 * len(split) + i
            site = "www.cnn.com" if i % 2 == 0 else "www.dailymail.co.uk"
            highlights = [
                f"{NAMES[(seed + h) % len(NAMES)]} says the {OBJECTS[(seed + h) % len(OBJECTS)]} is back"
                + ["", ".", "!", " 'for good'"][(i + h) % 4]
                for h in range(3 + i % 2)
            ]
            records.append(
                (split, f"http://{site}/2015/{split}/{i:02d}/story.html", _paragraphs(words, seed), highlights)
            )
    return records


_HF_CNN_ENDS = ".!?'`\")\u2019\u201d"
"""abisee/cnn_dailymail's conversion adds `` .`` to a story line ending in none of these."""


def write_cnn_dailymail(folder: Path) -> None:
    """abisee/cnn-dailymail's ``url_lists/all_{train,val,test}.txt`` and ``{cnn,dailymail}/stories/
    <sha1(url)>.story`` files (paragraphs, then ``@highlight`` blocks) for 12 train, 4 val and
    8 test stories."""
    lists: dict[str, list[str]] = {}
    for split, url, paragraphs, highlights in _cnn_records():
        lists.setdefault({"validation": "val"}.get(split, split), []).append(url)
        source = "cnn" if "cnn.com" in url else "dailymail"
        story = "\n\n".join(paragraphs) + "\n\n" + "".join(f"@highlight\n\n{h}\n\n" for h in highlights)
        target = folder / source / "stories" / (hashlib.sha1(url.encode("utf-8")).hexdigest() + ".story")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(story, encoding="utf-8")
    for name, urls in lists.items():
        (folder / "url_lists").mkdir(parents=True, exist_ok=True)
        (folder / "url_lists" / f"all_{name}.txt").write_text("".join(u + "\n" for u in urls), encoding="utf-8")
    for source in ("cnn", "dailymail"):
        (folder / source / "stories").mkdir(parents=True, exist_ok=True)


def cnn_pickle_rows() -> dict[str, list[dict[str, str]]]:
    """The same stories as abisee/cnn_dailymail 3.0.0's rows (what HELM's ``cnndm.pk`` is taken
    to hold): ``article`` the stripped paragraphs joined with spaces, ``highlights`` joined with
    line breaks, `` .`` added to a line without a sentence end."""

    def ended(line: str) -> str:
        line = line.strip()
        return line if line[-1] in _HF_CNN_ENDS else line + " ."

    rows: dict[str, list[dict[str, str]]] = {"train": [], "validation": [], "test": []}
    for split, url, paragraphs, highlights in _cnn_records():
        rows[split].append(
            {
                "article": " ".join(ended(p) for p in paragraphs),
                "highlights": "\n".join(ended(h) for h in highlights),
                "id": hashlib.sha1(url.encode("utf-8")).hexdigest(),
            }
        )
    return rows


_XSUM_SHARE = ["Share this with", "Email", "Facebook", "Messenger", "Twitter", "WhatsApp", "Copy this link"]
_XSUM_ARTICLES = {
    # (article words, summary words, what HELM's XSum filter sees)
    "train": (
        (110, 20, ""),
        (125, 18, ""),
        (140, 24, ""),
        (90, 12, ""),
        (100, 11, ""),
        (80, 8, ""),  # a summary of 10 words or fewer
        (60, 24, ""),  # a summary longer than a fifth of the article
        (120, 20, "Media playback is unsupported on your device"),
        (130, 19, "Last updated at 12:00 GMT"),
        (30, 20, ""),
        (170, 20, ""),
        (115, 21, ""),
    ),
    "validation": ((200, 20, ""), (560, 23, ""), (95, 17, "")),
    "test": (
        (150, 20, ""),
        (300, 21, ""),
        (530, 22, ""),
        (250, 19, ""),
        (90, 18, ""),
        (60, 9, ""),
        (340, 24, ""),
        (120, 20, ""),
        (410, 16, ""),
    ),
}


def _xsum_records() -> list[tuple[str, str, str, str, list[str], bool]]:
    """(split, id, title, summary, body lines, share lines written) of every article, in split-file order."""
    records = []
    for split, articles in _XSUM_ARTICLES.items():
        for i, (words, summary_words, marker) in enumerate(articles):
            seed = 1000 + 100 * len(split) + i
            body = [p for p in _paragraphs(words, seed)]
            if marker:
                body.insert(1, marker)
            summary = " ".join(" ".join(_sentences(3, seed + 5)).split()[:summary_words]).rstrip(".") + "."
            doc_id = f"{3 + len(split)}{seed:07d}"
            records.append(
                (
                    split,
                    doc_id,
                    f"{NAMES[i % len(NAMES)]} and the {OBJECTS[i % len(OBJECTS)]}",
                    summary,
                    body,
                    i % 3 == 1,
                )
            )
    return records


def write_xsum(folder: Path) -> None:
    """EdinburghNLP/XSum's ``bbc-summary-data/<id>.summary`` files (``[SN]URL``, ``TITLE``,
    ``FIRST-SENTENCE``, ``RESTBODY``; some with the page's share-button lines) and its split file,
    for 12 train, 3 validation and 9 test articles; the split file also lists a test id whose
    file is missing (as a few of the real list's are)."""
    splits: dict[str, list[str]] = {"train": [], "validation": [], "test": []}
    data = folder / "bbc-summary-data"
    data.mkdir(parents=True, exist_ok=True)
    for split, doc_id, title, summary, body, share in _xsum_records():
        splits[split].append(doc_id)
        lines = body[:1] + (_XSUM_SHARE if share else []) + body[1:]
        text = (
            f"[SN]URL[SN]\nhttp://www.bbc.co.uk/news/{doc_id}\n\n[SN]TITLE[SN]\n{title}\n\n"
            f"[SN]FIRST-SENTENCE[SN]\n{summary}\n\n[SN]RESTBODY[SN]\n" + "\n".join(lines) + "\n"
        )
        (data / f"{doc_id}.summary").write_text(text, encoding="utf-8")
    splits["test"].insert(3, "39999999")
    (folder / "XSum-TRAINING-DEV-TEST-SPLIT-90-5-5.json").write_text(json.dumps(splits), encoding="utf-8")


def xsum_pickle_rows() -> dict[str, list[dict[str, str]]]:
    """The same articles as EdinburghNLP/xsum's rows (what HELM's ``xsum.pk`` is taken to hold):
    ``document`` the body's lines without the share-button lines, ``summary``, ``id``."""
    rows: dict[str, list[dict[str, str]]] = {"train": [], "validation": [], "test": []}
    for split, doc_id, _title, summary, body, _share in _xsum_records():
        rows[split].append({"document": "\n".join(body), "summary": summary, "id": doc_id})
    return rows


def write_helm_pickle(target: Path, rows: dict[str, list[dict[str, str]]]) -> None:
    """HELM's preprocessed summarization file: the rows per split, pickled (HELM unpickles it;
    holistic never reads it)."""
    import pickle

    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as fh:
        pickle.dump(rows, fh, protocol=4)
