"""MkDocs hook: the docstrings' Sphinx roles (:class:`X`, :func:`f`...) shown as plain code.

The reference pages render docstrings as Markdown, where ``:class:`X``` would keep the
role's name in front of the code; this drops it, so the page reads ``X``, and shortens
``~package.module.X`` to ``X`` as Sphinx does.
"""

from __future__ import annotations

import re

ROLE = re.compile(r":(?:py:)?(?:class|mod|func|meth|attr|data|exc|obj|const|ref):(?=<code>)")

SHORT = re.compile(r"<code>~(?:\w+\.)+(\w+)</code>")


def on_page_content(html: str, **_: object) -> str:
    return SHORT.sub(r"<code>\1</code>", ROLE.sub("", html))
