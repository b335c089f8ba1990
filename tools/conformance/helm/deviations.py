"""What the harness cannot give HELM exactly as its downloads would (``DEVIATIONS``) and the HELM
stats no run here can compare (``NOT_COMPARED``): named in every report, never silent."""

from __future__ import annotations

from tools.conformance.helm.keys import HELM_PICKLES

PYTREC_EVAL = "pytrec-eval-terrier==0.5.11"
"""The trec_eval bindings HELM's ranking metric imports (module ``pytrec_eval``): HELM's
``ranking`` extra pins ``pytrec_eval==0.5``, whose build downloads trec_eval's source from
GitHub, so the harness gives HELM this fork's wheel (the same module and measures, trec_eval
bundled) in a folder of its own on HELM's path (see :data:`DEVIATIONS`)."""


DEVIATIONS: dict[str, list[str]] = {
    "boolq": [
        "The authors' Google release (train.jsonl 9,427 / dev.jsonl 3,270) is not here; its rows are written "
        "from the SuperGLUE val.jsonl (the same 3,270 dev questions; the passage's 'Title -- ' prefix is the "
        "title field): the 100 questions holistic holds out as its in-context pool are the train file, the "
        "other 3,170 the dev file. Both tools read those same bytes.",
        "HELM's BoolQ contrast set (allenai/contrast-sets) is not here: HELM is given an empty one, so no "
        "instance carries contrast inputs (they are read only by contrast-set perturbations).",
    ],
    "imdb": [
        "The authors' aclImdb archive is not here; an aclImdb tree is written from imdb_1000.txt (TextFooler's "
        "lower-cased, tokenised copy of 1,000 test reviews): 50 reviews (holistic's held-out pool) are train/, "
        "the rest test/, one review per <n>_<rating>.txt file (rating 10 positive, 1 negative). Both tools "
        "read those same bytes.",
        "HELM 0.5.16 lists each folder in a pinned order it downloads (imdb_scenario_pinned_file_order.json, "
        "the os.listdir order of the official HELM runs' machine), which cannot be fetched here and names the "
        "full archive's files; holistic reads the files in number order, and the harness gives HELM a pinned "
        "order file in that same order.",
        "HELM's IMDB contrast set (allenai/contrast-sets) is not here: HELM is given empty ones, so no review "
        "moves from train to valid as a contrast original.",
    ],
    "raft": [
        "HELM reads ought/raft through datasets.load_dataset (the Hub is not reachable here); the harness "
        "answers that call with the RAFT authors' train.csv as a datasets.Dataset whose Label is a "
        "ClassLabel of 'Unlabeled' plus task.json's labels (the Hub dataset's features), and HELM's own "
        "loader does the rest (split, field order, label names). HELM's prompt_construction_settings.json "
        "(a Dropbox download) is written from holistic's copy of the RAFT authors' instructions.",
    ],
    **{
        key: [
            "The authors' v1.0 dev shards (nq-dev-0{0..4}.jsonl.gz) are not here: the harness writes five small "
            "ones in their full format, HTML bytes and byte spans included (see write_natural_qa), and both "
            "tools read those bytes."
        ]
        for key in ("natural_qa_closedbook", "natural_qa_openbook_longans")
    },
    "civil_comments": [
        "WILDS's all_data_with_identities.csv is not here: the harness writes a small one in its format (see "
        "write_civil_comments) and both tools read those bytes.",
    ],
    "narrative_qa": [
        "The authors' files (deepmind/narrativeqa) are not here: the harness writes a small qaps.csv and "
        "third_party/wikipedia/summaries.csv in their format (see write_narrative_qa) and both tools read "
        "those bytes.",
    ],
    **{
        f"msmarco_{track}": [
            "HELM's MS MARCO files (its CodaLab copies of the cleaned passage collection and the BM25 top-k "
            "lists, the MS MARCO training and dev queries and judgements, TREC DL 2019's) are not here: the "
            "harness writes small ones in their formats (see write_msmarco) and both tools read those bytes.",
            "HELM's ranking metric imports pytrec_eval, which HELM's 'ranking' extra pins at 0.5, a source "
            "release whose build downloads trec_eval from GitHub; HELM is given the wheel of its fork "
            f"{PYTREC_EVAL} (the same module, measures and trec_eval code) on its path instead.",
            "HELM's BasicReferenceMetric also reports exact_match, predicted_index and max_prob on ranking "
            "runs, from the generated answer's log-probability divided by the passage's token count (a "
            "choice-scoring formula that does not read the answer); holistic does not report them, and "
            "they are listed as HELM's only. So are HELM's per-passage ref<i>_rank stats.",
        ]
        for track in ("regular", "trec")
    },
    **{
        key: [
            f"HELM 0.5.16 reads its own preprocessed pickle ({HELM_PICKLES[key]}, downloaded from HELM's bucket) "
            "instead of the authors' files; holistic never loads a pickle (unpickling runs code). The harness "
            f"writes small files in the authors' format ({what}) for holistic and, from the same records, the "
            f"pickle for HELM: a dict of 'train', 'validation' and 'test' lists of rows with {columns}, the rows "
            f"of the {hub} conversion of those files ({conversion}), in the authors' list order. That HELM's "
            "own pickle holds exactly those rows, in that order, is taken, not checked: it cannot be had here "
            "and is not read."
        ]
        for key, what, columns, hub, conversion in (
            (
                "cnn_dailymail",
                "url_lists/all_{train,val,test}.txt and {cnn,dailymail}/stories/<sha1(url)>.story, see "
                "write_cnn_dailymail",
                "'article', 'highlights' and 'id' (HELM reads the first two)",
                "abisee/cnn_dailymail 3.0.0",
                "each line stripped, ' .' added to a line without a sentence end, the paragraphs joined with "
                "spaces, the highlights with line breaks",
            ),
            (
                "xsum",
                "bbc-summary-data/<id>.summary and XSum-TRAINING-DEV-TEST-SPLIT-90-5-5.json, see write_xsum",
                "'document', 'summary' and 'id' (HELM reads the first two)",
                "EdinburghNLP/xsum",
                "blank and share-button lines left out, RESTBODY the document, FIRST-SENTENCE the summary",
            ),
        )
    },
}
"""What the harness cannot give HELM exactly as HELM's downloads would: named, never silent."""

NOT_COMPARED: dict[str, list[str]] = {
    key: [
        "summarization_coverage, summarization_density, summarization_compression: HELM computes them with "
        "summ_eval's DataStatsMetric on spaCy en_core_web_sm tokens (its 'summarization' extra), neither of "
        "which can be installed here, so HELM's process runs without them (see peer/helm_run_patched.py) and reports none; "
        "holistic's are listed under holistic_only.",
        "SummaC and BERTScore: HELM computes them only on a GPU device; its core run entries (and these) "
        "are device=cpu, so neither tool reports them.",
        "HumanEval-* and QAFactEval: HELM looks them up by deployment and exact summary among the models of "
        "its own runs, so a model HELM never ran has none; the harness skips their downloads.",
    ]
    for key in ("cnn_dailymail", "xsum")
}
"""HELM stats of a scenario that no run here can compare, and why (in the report)."""
