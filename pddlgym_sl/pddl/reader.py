"""Read PDDL text into a tree of `SList` / `Symbol` nodes that remember their line numbers.

pyperplan's own reader forgets where a token came from, so every later error could only name the
file. This reader tokenizes the text once (linear time, no recursion), lower-cases tokens and drops
``;`` comments exactly like pyperplan, and returns the top-level ``(define ...)`` form as nested
lists whose atoms and lists carry the line they start on. Everything that is not a single,
balanced ``(define ...)`` form is rejected with a `ParseError` naming the line.

The tree is also what pyperplan's parser consumes (it takes nested lists of strings), so the
text is tokenized once for both.
"""

from __future__ import annotations

import re
from pathlib import Path

from pddlgym_sl.errors import ParseError

#: Deepest nesting accepted. Real PDDL needs < 10 levels; the limit keeps every later
#: (recursive) pass far below Python's recursion limit.
MAX_DEPTH = 100

#: List heads that open a section of a domain or problem; used to guess which section lost its ')'.
SECTION_KEYWORDS = frozenset(
    {
        ":requirements",
        ":types",
        ":constants",
        ":predicates",
        ":functions",
        ":constraints",
        ":action",
        ":durative-action",
        ":derived",
        ":domain",
        ":objects",
        ":init",
        ":goal",
        ":metric",
    }
)

# A newline (to count lines), a comment, a parenthesis, or a word. As in pyperplan, '?' always
# starts a new word, so "?x?y" reads as "?x" "?y". Other whitespace is skipped by finditer.
_TOKEN = re.compile(r"\n|;[^\n]*|[()]|\?[^\s();?]*|[^\s();?]+")
# Control characters never found in a text file (tab, newlines, CR, VT and FF are allowed).
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")


class Symbol(str):
    """A lower-cased PDDL token (name, variable, keyword) that knows its line."""

    line: int

    def __new__(cls, text: str, line: int) -> Symbol:
        obj = super().__new__(cls, text)
        obj.line = line
        return obj

    def __reduce__(self):
        return Symbol, (str(self), self.line)  # picklable: a task loaded in a child process


class SList(list):
    """A parenthesised PDDL list; `line` is the line of its '('."""

    def __init__(self, line: int, items: object = ()) -> None:
        super().__init__(items)  # type: ignore[call-overload]
        self.line = line

    def __reduce__(self):
        return SList, (self.line, list(self))


def head_of(node: object) -> Symbol | None:
    """The leading name of a list ``(name ...)``; None for atoms, ``()`` and lists of lists."""
    if isinstance(node, SList) and node and isinstance(node[0], Symbol):
        return node[0]
    return None


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _unclosed_culprit(stack: list[SList]) -> SList:
    """Guess which '(' lacks its ')' when the file ends with `stack` still open.

    A section that lost its ')' swallows the sections after it, so a section that contains
    another section (e.g. an ``(:action`` inside an ``(:action``) is the likely culprit.
    Otherwise the innermost open list is reported.
    """
    for child in stack[0]:
        if head_of(child) in SECTION_KEYWORDS:
            for grandchild in child:
                if head_of(grandchild) in SECTION_KEYWORDS:
                    return child
    return stack[-1]


def read(text: str, source: str | Path | None = None) -> SList:
    """Parse `text` into its single top-level ``(define ...)`` form.

    Raises `ParseError` (with the line) for control characters, an empty file or one holding
    only comments, unbalanced parentheses, nesting deeper than `MAX_DEPTH`, text after the
    top-level form, and a top level that is not ``(define ...)``.
    """
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    bad = _CONTROL.search(text)
    if bad is not None:
        raise ParseError(
            f"binary data: control character {bad.group()!r} is not allowed in a PDDL file",
            file=source,
            line=_line_of(text, bad.start()),
        )

    line = 1
    stack: list[SList] = []
    top: SList | None = None
    top_closed_line = 0
    saw_comment = False
    # After the top-level form closes: first extra token, and whether a ')' there is unmatched.
    extra: tuple[str, int] | None = None
    extra_depth = 0
    unmatched_close = False

    for match in _TOKEN.finditer(text):
        tok = match.group()
        if tok == "\n":
            line += 1
            continue
        if tok[0] == ";":
            saw_comment = True
            continue
        if top is not None:  # trailing text: classify it, then keep scanning only to count depth
            if extra is None:
                extra = (tok, line)
            if tok == "(":
                extra_depth += 1
            elif tok == ")":
                extra_depth -= 1
                if extra_depth < 0:
                    unmatched_close = True
                    break
            continue
        if tok == "(":
            if len(stack) >= MAX_DEPTH:
                raise ParseError(f"parentheses nested deeper than {MAX_DEPTH} levels", file=source, line=line)
            lst = SList(line)
            if stack:
                stack[-1].append(lst)
            stack.append(lst)
        elif tok == ")":
            if not stack:
                raise ParseError("unbalanced parentheses: ')' without a matching '('", file=source, line=line)
            closed = stack.pop()
            if not stack:
                top = closed
                top_closed_line = line
        elif not stack:
            raise ParseError(f"expected '(define ...)', found {tok!r}", file=source, line=line)
        else:
            stack[-1].append(Symbol(tok.lower(), line))

    if stack:
        culprit = _unclosed_culprit(stack)
        raise ParseError(
            f"unbalanced parentheses: the '(' opened on line {culprit.line} is never closed (missing ')')",
            file=source,
            line=culprit.line,
        )
    if top is None:
        cause = "file contains only comments" if saw_comment else "empty file"
        raise ParseError(f"{cause}: expected '(define ...)'", file=source)
    if unmatched_close:
        raise ParseError(
            f"unbalanced parentheses: extra ')': the top-level form opened on line {top.line} is "
            f"already closed on line {top_closed_line}, but more text follows",
            file=source,
            line=top_closed_line,
        )
    if extra is not None:
        raise ParseError(
            f"unexpected text {extra[0]!r} after the end of the top-level (define ...) form",
            file=source,
            line=extra[1],
        )
    if not top or top[0] != "define":
        found = f"({top[0]} ...)" if head_of(top) else "(( ...) ...)" if top else "()"
        raise ParseError(f"top-level form must be (define ...), found {found}", file=source, line=top.line)
    return top
