"""Bad PDDL input fails with a typed `PDDLError` that names the file, the line and the cause.

The corpus in ``tests/data/malformed/`` holds one small file per defect; `CASES` maps each file
to the exception class, the line (None where no line exists, e.g. an empty file) and a
substring of the cause. Generated inputs (binary garbage, 100k nested parentheses) are built in
the tests. The real domains must still load with the tiny problems in ``tests/data/tiny/``, into
the task whose reachable part pyperplan's own parser and grounder give.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from pyperplan.grounding import ground
from pyperplan.pddl.parser import Parser

from pddlgym_sl import load_task
from pddlgym_sl.errors import (
    ConfigError,
    GroundingError,
    InputLimitError,
    ParseError,
    PDDLError,
    SemanticError,
    UnsupportedRequirementError,
)
from pddlgym_sl.pddl import parse_domain, parse_domain_string, parse_problem, parse_problem_string
from pddlgym_sl.task import compile_task

REPO = Path(__file__).resolve().parents[1]
MALFORMED = Path(__file__).parent / "data" / "malformed"
TINY = Path(__file__).parent / "data" / "tiny"
FERRY = REPO / "domains" / "ferry" / "domain.pddl"
TYPED = TINY / "typed_domain.pddl"
DOMAINS = ("blocksworld", "ferry", "gripper", "visitall")


@dataclass(frozen=True)
class Case:
    """One corpus file: how loading it must fail."""

    file: str
    error: type[PDDLError]
    line: int | None
    cause: str
    against: Path | None = None  # the domain a problem file is loaded with; None: a domain file

    @property
    def path(self) -> Path:
        return MALFORMED / self.file


def _domain(file: str, error: type[PDDLError], line: int | None, cause: str) -> Case:
    return Case(file, error, line, cause)


def _problem(file: str, error: type[PDDLError], line: int | None, cause: str, against: Path = FERRY) -> Case:
    return Case(file, error, line, cause, against)


CASES = [
    # reader: the text is not one balanced (define ...) form
    _domain("empty.pddl", ParseError, None, "empty file"),
    _domain("only_comments.pddl", ParseError, None, "only comments"),
    _domain("unbalanced_missing_paren_in_action.pddl", ParseError, 4, "'(' opened on line 4 is never closed"),
    _domain("unbalanced_missing_paren_at_end.pddl", ParseError, 2, "never closed"),
    _domain("unbalanced_extra_paren.pddl", ParseError, 7, "extra ')'"),
    _domain("unbalanced_stray_close_paren.pddl", ParseError, 2, "')' without a matching '('"),
    _domain("trailing_garbage.pddl", ParseError, 5, "unexpected text 'this' after the end"),
    _domain("not_define_top_level.pddl", ParseError, 2, "top-level form must be (define ...)"),
    _domain("not_a_list.pddl", ParseError, 2, "expected '(define ...)', found 'hello'"),
    # domain structure and names
    _domain("problem_file_as_domain.pddl", ParseError, 2, "this is a problem file, not a domain file"),
    _domain("domain_unknown_section.pddl", ParseError, 3, "unknown domain section (:preds"),
    _domain("domain_misspelled_action_field.pddl", ParseError, 6, "found ':precondtion'"),
    _domain("domain_unknown_predicate_in_action.pddl", SemanticError, 6, "unknown predicate 'holdng'"),
    _domain("domain_wrong_arity_in_action.pddl", SemanticError, 7, "'on' takes 2 argument(s) but is given 1"),
    _domain("domain_variable_not_a_parameter.pddl", SemanticError, 8, "?z in the effect of action 'stack'"),
    _domain("domain_unknown_type.pddl", SemanticError, 5, "unknown type 'vehicle'"),
    _domain("domain_unknown_constant.pddl", SemanticError, 7, "unknown constant 'table'"),
    _domain("domain_duplicate_action.pddl", SemanticError, 8, "action 'pickup' is defined twice"),
    _domain("domain_duplicate_predicate.pddl", SemanticError, 5, "predicate 'clear' is declared twice"),
    # domain features outside STRIPS + typing, declared or merely used
    _domain("domain_unsupported_requirement.pddl", UnsupportedRequirementError, 4, ":adl"),
    _domain(
        "domain_negative_precondition_undeclared.pddl",
        UnsupportedRequirementError,
        8,
        ":negative-preconditions",
    ),
    _domain("domain_conditional_effect.pddl", UnsupportedRequirementError, 8, ":conditional-effects"),
    _domain("domain_equality_precondition.pddl", UnsupportedRequirementError, 6, ":equality"),
    _domain("domain_numeric_fluents.pddl", UnsupportedRequirementError, 4, ":numeric-fluents"),
    _domain("domain_derived_predicate.pddl", UnsupportedRequirementError, 5, ":derived-predicates"),
    # the constructs of the fragment beyond STRIPS, misused
    _domain(
        "domain_negation_around_formula.pddl", UnsupportedRequirementError, 8, ":disjunctive-preconditions"
    ),
    _domain(
        "domain_equality_wrong_arity.pddl", ParseError, 7, "(= ...) in the precondition of action 'stack'"
    ),
    _domain(
        "domain_equality_unknown_variable.pddl", SemanticError, 8, "?z in the precondition of action 'stack'"
    ),
    _domain("domain_equality_in_effect.pddl", ParseError, 8, "cannot be an effect"),
    _domain("domain_negative_precondition_wrong_arity.pddl", SemanticError, 8, "'on' takes 2 argument(s)"),
    _domain("domain_empty_either.pddl", ParseError, 7, "(either ...) needs at least one type"),
    _domain("domain_either_unknown_type.pddl", SemanticError, 7, "unknown type 'boat'"),
    # problems
    _problem("domain_file_as_problem.pddl", ParseError, 2, "this is a domain file, not a problem file"),
    _problem("problem_missing_domain.pddl", ParseError, 2, "no (:domain ...) section"),
    _problem("problem_missing_init.pddl", ParseError, 2, "no (:init ...) section"),
    _problem("problem_missing_goal.pddl", ParseError, 2, "no (:goal ...) section"),
    _problem("problem_for_another_domain.pddl", GroundingError, 3, "for domain 'gripper', not 'ferry'"),
    _problem(
        "problem_unknown_predicate_in_init.pddl", SemanticError, 6, "unknown predicate 'at-boat' in :init"
    ),
    _problem(
        "problem_unknown_predicate_in_goal.pddl", SemanticError, 7, "unknown predicate 'parked' in :goal"
    ),
    _problem("problem_wrong_arity_in_init.pddl", SemanticError, 6, "'at' takes 2 argument(s) but is given 1"),
    _problem("problem_wrong_arity_in_goal.pddl", SemanticError, 7, "'empty-ferry' takes 0 argument(s)"),
    _problem("problem_undefined_object.pddl", SemanticError, 7, "undefined object 'c9'"),
    _problem("problem_variable_in_init.pddl", SemanticError, 5, "variable ?l in :init"),
    _problem("problem_duplicate_object.pddl", SemanticError, 5, "object 'l1' is declared twice"),
    _problem("problem_unknown_type.pddl", SemanticError, 6, "unknown type 'boat'", against=TYPED),
    _problem("problem_type_mismatch.pddl", SemanticError, 7, "must be of type package", against=TYPED),
    _problem("problem_disjunctive_goal.pddl", UnsupportedRequirementError, 6, ":disjunctive-preconditions"),
    _problem("problem_negative_goal.pddl", UnsupportedRequirementError, 7, ":negative-preconditions"),
    _problem("problem_action_costs_metric.pddl", UnsupportedRequirementError, 7, ":action-costs"),
    _problem("problem_negative_init.pddl", ParseError, 6, "negative literal (not ...) in :init"),
    _problem(
        "problem_constant_redeclared.pddl", SemanticError, 5, "domain constant of type 'place'", against=TYPED
    ),
]


def _load(path: Path, against: Path | None) -> object:
    if against is None:
        return parse_domain(path)
    return parse_problem(path, parse_domain(against))


def _check(err: PDDLError, case: Case) -> None:
    assert isinstance(err, PDDLError)
    assert err.file == str(case.path)
    assert err.line == case.line
    assert case.cause in err.cause
    where = err.file if case.line is None else f"{err.file}:{case.line}"
    assert str(err) == f"{where}: {err.cause}"


# ------------------------------------------------------------------------------- the corpus
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.file)
def test_malformed_file_raises_typed_error(case: Case) -> None:
    with pytest.raises(case.error) as info:
        _load(case.path, case.against)
    _check(info.value, case)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.file)
def test_load_task_reports_the_same_error(case: Case) -> None:
    if case.against is None:
        domain_file, problem_file = case.path, TINY / "ferry.pddl"
    else:
        domain_file, problem_file = case.against, case.path
    with pytest.raises(case.error) as info:
        load_task(domain_file, problem_file)
    _check(info.value, case)


def test_corpus_and_table_match() -> None:
    files = {p.name for p in MALFORMED.iterdir()}
    assert files == {c.file for c in CASES}
    assert len(files) >= 15


def test_nothing_but_pddl_error_escapes() -> None:
    """Every corpus file (read as a domain, and as a problem of every domain) and 200 random
    mutations of valid files fail, if at all, with a PDDLError and nothing else."""
    domains = [REPO / "domains" / d / "domain.pddl" for d in DOMAINS] + [TYPED]
    for path in sorted(MALFORMED.iterdir()):
        for against in (None, *domains):
            with contextlib.suppress(PDDLError):
                _load(path, against)
        with contextlib.suppress(PDDLError):
            load_task(path, path)

    rng = random.Random(0)
    pairs = [(REPO / "domains" / d / "domain.pddl", TINY / f"{d}.pddl") for d in DOMAINS]
    pairs.append((TYPED, TINY / "typed_problem.pddl"))
    vocab = ["(", ")", "and", "not", "or", "-", "?x", ":action", ":init", "(either", "object", "\x00", ";"]
    for _ in range(200):
        dfile, pfile = rng.choice(pairs)
        mutate_domain = rng.random() < 0.5
        text = (dfile if mutate_domain else pfile).read_text()
        toks = re.findall(r"\(|\)|[^\s()]+|\s+", text)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(toks))
            op = rng.random()
            if op < 0.33:
                del toks[i]
            elif op < 0.66:
                toks.insert(i, rng.choice(vocab) + " ")
            else:
                j = rng.randrange(len(toks))
                toks[i], toks[j] = toks[j], toks[i]
        text = "".join(toks)
        try:
            if mutate_domain:
                domain = parse_domain_string(text, source="mutant")
                problem = parse_problem(pfile, domain)
            else:
                domain = parse_domain(dfile)
                problem = parse_problem_string(text, domain, source="mutant")
            compile_task(domain, problem)
        except PDDLError as err:
            assert err.file is not None


# ------------------------------------------------------------------------------- generated inputs
def test_nul_byte_is_binary_garbage(tmp_path: Path) -> None:
    path = tmp_path / "nul.pddl"
    path.write_bytes(b"(define (domain d)\n  (:predicates \x00 (p)))\n")
    with pytest.raises(ParseError) as info:
        parse_domain(path)
    assert (info.value.file, info.value.line) == (str(path), 2)
    assert "binary data" in info.value.cause


def test_undecodable_bytes_are_binary_garbage(tmp_path: Path) -> None:
    path = tmp_path / "latin1.pddl"
    path.write_bytes(b"(define (domain d)\n  (:predicates (p))\n  (:action caf\xe9))\n")
    with pytest.raises(ParseError) as info:
        parse_domain(path)
    assert (info.value.file, info.value.line) == (str(path), 3)
    assert "not a UTF-8 text file" in info.value.cause


@pytest.mark.parametrize("seed", range(5))
def test_random_bytes_are_a_parse_error(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "random.bin"
    path.write_bytes(b"\x00" + random.Random(seed).randbytes(4096))
    with pytest.raises(ParseError) as info:
        parse_domain(path)
    assert info.value.file == str(path)
    with pytest.raises(ParseError):
        parse_problem(path, parse_domain(FERRY))


@pytest.mark.parametrize("text", ["(" * 100_000, "(" * 100_000 + ")" * 100_000, "(define " * 50_000])
def test_deep_nesting_is_a_parse_error_not_a_crash(tmp_path: Path, text: str) -> None:
    path = tmp_path / "deep.pddl"
    path.write_text(text)
    with pytest.raises(ParseError) as info:
        parse_domain(path)
    assert info.value.line == 1
    assert "nested deeper" in info.value.cause


def test_control_character_in_string_input() -> None:
    with pytest.raises(ParseError) as info:
        parse_domain_string("(define (domain d)\n\n (:predicates (p\x07)))", source="bell.pddl")
    assert (info.value.file, info.value.line) == ("bell.pddl", 3)


def test_missing_file_and_directory_are_pddl_errors(tmp_path: Path) -> None:
    with pytest.raises(PDDLError) as info:
        parse_domain(tmp_path / "nope.pddl")
    assert "file not found" in str(info.value)
    with pytest.raises(PDDLError, match="is a directory"):
        parse_domain(tmp_path)


def test_files_that_are_not_regular_files_are_refused_before_reading(tmp_path: Path) -> None:
    """A FIFO would block a read forever, /dev/zero never ends, a symlink loop never resolves:
    each is a PDDLError naming the file, raised without opening it."""
    fifo = tmp_path / "fifo.pddl"
    os.mkfifo(fifo)
    loop = tmp_path / "loop.pddl"
    loop.symlink_to(loop)
    for path, cause in ((fifo, "a FIFO"), (Path("/dev/zero"), "a device"), (loop, "symbolic link loop")):
        with pytest.raises(PDDLError, match=cause) as info:
            parse_domain(path)
        assert info.value.file == str(path)


def test_file_size_limit_is_enforced_and_configurable(tmp_path: Path, monkeypatch) -> None:
    domain = TINY / "typed_domain.pddl"
    size = domain.stat().st_size
    monkeypatch.setenv("PDDLGYM_SL_MAX_FILE_BYTES", str(size - 1))
    with pytest.raises(InputLimitError, match="PDDLGYM_SL_MAX_FILE_BYTES") as info:
        parse_domain(domain)
    assert info.value.file == str(domain)
    monkeypatch.setenv("PDDLGYM_SL_MAX_FILE_BYTES", str(size))
    parse_domain(domain)
    monkeypatch.setenv("PDDLGYM_SL_MAX_FILE_BYTES", "lots")
    with pytest.raises(ConfigError):
        parse_domain(domain)


def test_problem_needs_a_parsed_domain() -> None:
    with pytest.raises(ConfigError):
        parse_problem_string((TINY / "ferry.pddl").read_text(), "ferry")  # type: ignore[arg-type]


def test_string_parsers_name_their_source() -> None:
    with pytest.raises(SemanticError) as info:
        parse_problem_string(
            (MALFORMED / "problem_undefined_object.pddl").read_text(), parse_domain(FERRY), source="p.pddl"
        )
    assert str(info.value).startswith("p.pddl:7: undefined object 'c9'")


# ------------------------------------------------------------------------------- valid input
def _pyperplan_reference(domain_file: Path, problem_file: Path):
    """pyperplan's grounding of a STRIPS problem (an independent parser and grounder), and its
    initial atoms (statics included)."""
    parser = Parser(str(domain_file), str(problem_file))
    problem = parser.parse_problem(parser.parse_domain())
    init = {f"({a.name}{''.join(' ' + o for o, _ in a.signature)})" for a in problem.initial_state}
    return ground(problem, remove_irrelevant_operators=False), init


def _reachable_operators(ref) -> set[str]:
    """Names of the pyperplan operators that change some reachable state (Fast Downward drops
    operators that never apply and those that change nothing, like gripper's move rooma rooma)."""
    seen, frontier, used = {ref.initial_state}, [ref.initial_state], set()
    while frontier:
        state = frontier.pop()
        for op in ref.operators:
            if op.applicable(state):
                succ = op.apply(state)
                if succ != state:
                    used.add(op.name)
                if succ not in seen:
                    seen.add(succ)
                    frontier.append(succ)
    return used


@pytest.mark.parametrize(
    ("domain_file", "problem_file"),
    [(REPO / "domains" / d / "domain.pddl", TINY / f"{d}.pddl") for d in DOMAINS]
    + [(TYPED, TINY / "typed_problem.pddl")],
    ids=[*DOMAINS, "typed"],
)
def test_valid_files_ground_like_pyperplan(domain_file: Path, problem_file: Path) -> None:
    """Our grounding (Fast Downward's translator) keeps exactly pyperplan's reachable actions that
    change something, and pyperplan's initial state and goal."""
    task = load_task(domain_file, problem_file)
    ref, init = _pyperplan_reference(domain_file, problem_file)
    assert task.n_facts > 0 and task.n_actions > 0
    assert set(task.facts) <= ref.facts
    assert set(task.actions) == _reachable_operators(ref)
    assert set(task.true_facts(task.init)) == ref.initial_state & set(task.facts)
    assert set(task.static_atoms) == init - set(task.facts)
    assert {task.facts[g] for g in task.goal} == ref.goals & set(task.facts)


def test_typed_fixture_uses_hierarchy_constants_and_either() -> None:
    task = load_task(TYPED, TINY / "typed_problem.pddl")
    assert task.object_types == {"a": "place", "b": "place", "depot": "place", "p1": "package", "t1": "truck"}
    assert "(marked depot)" in task.facts
    assert "(mark-depot)" in task.actions
    assert "(load p1 t1 a)" in task.actions


def test_deep_type_hierarchy_is_refused() -> None:
    chain = " ".join(f"t{i + 1} - t{i}" for i in range(20_000))
    text = f"(define (domain deep) (:requirements :typing) (:types t0 - object {chain}) (:predicates))"
    with pytest.raises(InputLimitError, match="257 levels below 'object'"):
        parse_domain_string(text, source="deep.pddl")
    shallow = " ".join(f"t{i + 1} - t{i}" for i in range(200))
    parse_domain_string(f"(define (domain ok) (:requirements :typing) (:types t0 - object {shallow}))")
