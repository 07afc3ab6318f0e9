"""The ``Args:`` sections of the public API agree with the signatures they document.

For every name in the ``__all__`` of every module of :mod:`torch_geometric_stream`
(the package, its subpackages and their modules; a class: its constructor,
documented in the class docstring, and its public methods; a function), each
callable is checked against these rules, but those of
:mod:`torch_geometric_stream.cli`: the command line's internals are no Python
API (its options are documented by ``--help``):

0. a callable that takes parameters (beyond ``self``/``cls``) has an
   ``Args:`` section (a dataclass: its ``Attributes:`` section; a class that
   inherits its constructor: the section of the class that defines it);

1. every parameter of the signature (keyword-only ones included, but
   ``self``/``cls`` and ``*args`` / ``**kwargs``) has an entry in ``Args:``,
   and every entry names a parameter of the signature (an entry may name
   several: ``alpha, beta (float)``);
2. a ``(default: X)`` (or ``(default X)``, ``X (the default)``, ``default: X``)
   whose ``X`` is a literal (``None``, a number, a string, a tuple; in double
   backticks, ``:obj:`` or bare, before a comment after a comma, semicolon or
   colon) or a name of the callable's module (``:data:`NAME```,
   ``time.monotonic``) equals the signature's default; a default given in
   words ("the last column") is skipped, and the skips are counted;
3. an entry marked ``optional`` documents a parameter that has a default,
   and every typed entry of a parameter with a default is marked (PyG's
   ``name (type, optional)``);
4. every entry has a type (``name (type): text``; a variadic one:
   ``**kwargs (optional): text``), but a cross-reference whose whole text
   is ``as for`` / ``as in`` / ``see`` and one role (``x, y: as for
   :func:`other`.``): its types are those of the entries it points to.

Every class of :mod:`torch_geometric_stream` itself has a constructor
``Args:`` section of its own.
"""
from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import pkgutil
import re
import sys
import types
from pathlib import Path
from typing import Any, Callable, Optional

import pytest

import torch_geometric_stream

PACKAGE = "torch_geometric_stream"
NAME_RE = re.compile(r"\*{0,2}[A-Za-z_]\w*")
NAMES_RE = re.compile(rf"{NAME_RE.pattern}(?:\s*,\s*{NAME_RE.pattern})*")
DEFAULT_RE = re.compile(r"\(default(?::\s*|\s+)")
THE_DEFAULT_RE = re.compile(r"(?:``([^`]+)``|:obj:`([^`]+)`)\s+\((?:the )?default\b(?!:)")
PROSE_DEFAULT_RE = re.compile(r"\bdefault:\s+")
ROLE_RE = re.compile(r"^(?::(?:obj|data|attr|const|class):)?`{1,2}([^`]+)`{1,2}")
CROSS_REFERENCE_RE = re.compile(r"(?:as (?:for|in)|see) :\w+:`[^`]+`\.")
UNSET = object()  # no default documented, or none that reads as a value


class DocstringError(ValueError):
    """An ``Args:`` section this parser cannot read."""


@dataclasses.dataclass
class Entry:
    """One ``Args:`` entry: ``names (type, optional): text``."""
    names: tuple[str, ...]
    type: Optional[str]
    optional: bool
    text: str


def _closing(text: str, start: int) -> int:
    """Index of the ``)`` that closes the ``(`` just before ``text[start]``, or -1."""
    depth = 1
    for i in range(start, len(text)):
        if text[i] in "([{":
            depth += 1
        elif text[i] in ")]}":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _split_top(text: str, separators: str) -> list[str]:
    """``text`` split at the ``separators`` outside brackets and quotes."""
    parts, depth, quote, start = [], 0, None, 0
    for i, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char in separators and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _parse_header(line: str) -> Entry:
    """The entry that ``line``, ``names (type, optional): text``, starts."""
    match = NAMES_RE.match(line)
    if match is None:
        raise DocstringError(f"not an Args entry: {line!r}")
    names = tuple(name.strip() for name in match.group().split(","))
    rest, type_ = line[match.end():].lstrip(), None
    if rest.startswith("("):
        end = _closing(rest, 1)
        if end < 0:
            raise DocstringError(f"unclosed type in Args entry: {line!r}")
        type_, rest = rest[1:end].strip(), rest[end + 1:].lstrip()
    if not rest.startswith(":"):
        raise DocstringError(f"no ':' after the name and type of Args entry: {line!r}")
    optional = type_ is not None and _split_top(type_, ",")[-1].strip() == "optional"
    return Entry(names, type_, optional, rest[1:].strip())


def parse_args_section(doc: Optional[str],
                       section: str = "Args") -> Optional[list[Entry]]:
    """The entries of ``doc``'s ``Args:`` (or other ``section``); ``None`` when it
    has none."""
    if not doc:
        return None
    lines = inspect.cleandoc(doc).splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == f"{section}:"]
    if not starts:
        return None
    if len(starts) > 1:
        raise DocstringError(f"more than one {section} section")
    head = lines[starts[0]]
    base = len(head) - len(head.lstrip())
    entries: list[Entry] = []
    indent = None
    for line in lines[starts[0] + 1:]:
        if not line.strip():
            continue
        depth = len(line) - len(line.lstrip())
        if depth <= base:  # the section ends
            break
        if indent is None:
            indent = depth
        if depth == indent:
            entries.append(_parse_header(line.strip()))
        elif depth > indent:
            entries[-1].text += " " + line.strip()
        else:
            raise DocstringError(f"{section} line indented less than its entries: {line!r}")
    if not entries:
        raise DocstringError(f"empty {section} section")
    return entries


def documented_default(text: str) -> Optional[str]:
    """The text of the default an entry's ``text`` states, or ``None``."""
    match = DEFAULT_RE.search(text)
    if match is not None:
        end = _closing(text, match.end())
        return text[match.end():end if end >= 0 else len(text)].strip()
    match = THE_DEFAULT_RE.search(text)
    if match is not None:
        return f"``{match.group(1) or match.group(2)}``"
    match = PROSE_DEFAULT_RE.search(text)  # "; default: the keys of the first row"
    if match is not None:
        return text[match.end():].split(".")[0].strip()
    return None


def default_value(text: str, namespace: dict[str, Any]) -> Any:
    """The value a documented default ``text`` names, or :data:`UNSET` when it is
    prose: a literal in backticks (or ``:obj:``) or bare, before any comma,
    semicolon or colon of commentary; or a constant of ``namespace``."""
    role = ROLE_RE.match(text)
    if role is not None:
        value, rest = role.group(1).strip(), text[role.end():].lstrip()
        if rest and rest[0] not in ",;:":  # "``a`` or ``b``": prose
            return UNSET
    else:
        value = _split_top(text, ",;:")[0].strip()
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        pass
    if re.fullmatch(r"~?[A-Za-z_][\w.]*", value):  # a constant: NAME or module.NAME
        head, *attributes = value.lstrip("~").split(".")
        found = namespace.get(head, UNSET)
        for attribute in attributes:
            found = getattr(found, attribute, UNSET)
        return found
    return UNSET


def same_default(documented: Any, actual: Any) -> bool:
    """Equal values of one kind: ``0`` documents ``0.0``, not ``False``; a tuple
    documents a list of the same items."""
    if isinstance(documented, bool) or isinstance(actual, bool):
        return type(documented) is type(actual) and documented == actual
    if isinstance(documented, (tuple, list)) and isinstance(actual, (tuple, list)):
        return len(documented) == len(actual) and all(
            same_default(a, b) for a, b in zip(documented, actual))
    numbers = (int, float)
    if type(documented) is not type(actual) and not (
            isinstance(documented, numbers) and isinstance(actual, numbers)):
        return False
    return documented == actual


@dataclasses.dataclass
class Report:
    """What :func:`check` found: the problems and how much it compared."""
    problems: list[str] = dataclasses.field(default_factory=list)
    parameters: int = 0
    defaults_compared: int = 0
    defaults_skipped: list[str] = dataclasses.field(default_factory=list)


def check(function: Callable, entries: Optional[list[Entry]], namespace: dict[str, Any],
          skip_first: bool = False) -> Report:
    """Check the ``entries`` of an ``Args:`` section against ``function``'s
    signature (without its first parameter with ``skip_first``)."""
    report = Report()
    if entries is None:
        return report
    parameters = dict(inspect.signature(function).parameters)
    if skip_first:
        parameters.pop(next(iter(parameters)))
    variadic = {("*" if p.kind is p.VAR_POSITIONAL else "**") + name for name, p in
                parameters.items() if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    plain = {name: p for name, p in parameters.items()
             if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    report.parameters = len(plain)
    documented = set()
    for entry in entries:
        if entry.type is None and not CROSS_REFERENCE_RE.fullmatch(entry.text):
            report.problems.append(f"{', '.join(entry.names)!r} has no type")
        for name in entry.names:
            if name in documented:
                report.problems.append(f"{name!r} documented twice")
            documented.add(name)
            if name in variadic:
                continue
            parameter = plain.get(name)
            if parameter is None:
                report.problems.append(f"{name!r} documented but not a parameter")
                continue
            _check_entry(name, parameter, entry, namespace, report)
    report.problems += [f"{name!r} not documented" for name in plain if name not in documented]
    return report


def _check_entry(name: str, parameter: inspect.Parameter, entry: Entry,
                 namespace: dict[str, Any], report: Report) -> None:
    has_default = parameter.default is not parameter.empty
    if entry.optional and not has_default:
        report.problems.append(f"{name!r} marked optional but has no default")
    if has_default and entry.type is not None and not entry.optional:
        report.problems.append(f"{name!r} has a default but is not marked optional")
    text = documented_default(entry.text)
    if text is None:
        return
    value = default_value(text, namespace)
    if value is UNSET:
        report.defaults_skipped.append(f"{name}: {text}")
    elif not has_default:
        report.problems.append(f"{name!r} documents default {text!r} but has none")
    else:
        report.defaults_compared += 1
        if not same_default(value, parameter.default):
            report.problems.append(f"{name!r} documents default {text!r}, "
                                   f"the signature has {parameter.default!r}")


# -- the public API ----------------------------------------------------------------------


@dataclasses.dataclass
class Documented:
    """A public callable and the docstring section that documents its parameters."""
    name: str
    function: Callable
    entries: Optional[list[Entry]]
    namespace: dict[str, Any]
    skip_first: bool  # self or cls


def _ours(obj: Any) -> bool:
    return getattr(obj, "__module__", "").split(".")[0] == PACKAGE


#: Children of the package left out, with their modules: the command line's
#: internals, and ``python -m``'s entry point.
EXCLUDED = ("cli", "__main__")


def public_modules() -> list[types.ModuleType]:
    """Every module of the package with an ``__all__`` (where it names its public
    API), but the :data:`EXCLUDED` ones and an integration whose optional extra
    is not installed."""
    names = [PACKAGE] + [info.name for info in pkgutil.walk_packages(
        torch_geometric_stream.__path__, f"{PACKAGE}.") if info.name.split(".")[1] not in EXCLUDED]
    modules = []
    for name in names:
        try:
            modules.append(importlib.import_module(name))
        except ImportError:  # an integration whose optional extra is not installed
            continue
    return [module for module in modules if hasattr(module, "__all__")]


def _constructor_entries(cls: type) -> Optional[list[Entry]]:
    """The class docstring's ``Args:``, or ``__init__``'s; a dataclass's
    ``Attributes:`` (its fields are its constructor's parameters); for a class
    that inherits its constructor and documents none, those of the class that
    defines it."""
    for doc in (cls.__doc__, cls.__init__.__doc__):
        entries = parse_args_section(doc)
        if entries is not None:
            return entries
    if dataclasses.is_dataclass(cls):
        return parse_args_section(cls.__doc__, "Attributes")
    if "__init__" not in vars(cls):
        owner = next(klass for klass in cls.__mro__ if "__init__" in vars(klass))
        if owner is not object and _ours(owner):
            return _constructor_entries(owner)
    return None


def _methods(cls: type) -> list[tuple[str, Callable, bool]]:
    """``(name, function, skip_first)`` of the public methods ``cls`` defines."""
    found = []
    for name, attribute in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(attribute, (staticmethod, classmethod)):
            found.append((name, attribute.__func__, isinstance(attribute, classmethod)))
        elif inspect.isfunction(attribute):
            found.append((name, attribute, True))
    return found


def public_callables() -> list[Documented]:
    """Every callable the public API names, each once: the functions, the
    constructors of the classes (but those of ``object``, ``Exception`` or
    ``tuple``), and the public methods of the classes (and of their bases in the
    package)."""
    found: dict[str, Documented] = {}
    classes = []
    for module in public_modules():
        for name in module.__all__:
            try:
                obj = getattr(module, name)
            except ImportError:  # an integration whose optional extra is not installed
                continue
            if not _ours(obj) or not callable(obj):  # a constant
                continue
            qualname = f"{obj.__module__}.{obj.__qualname__}"
            namespace = vars(sys.modules[obj.__module__])
            if not inspect.isclass(obj):
                found[qualname] = Documented(qualname, obj, parse_args_section(obj.__doc__),
                                             namespace, False)
                continue
            classes.append(obj)
            if _ours(obj.__init__):
                found[qualname] = Documented(qualname, obj.__init__, _constructor_entries(obj),
                                             namespace, True)
    for cls in classes:
        for klass in filter(_ours, cls.__mro__):
            for name, function, skip_first in _methods(klass):
                qualname = f"{klass.__module__}.{klass.__qualname__}.{name}"
                found[qualname] = Documented(qualname, function,
                                             parse_args_section(function.__doc__),
                                             vars(sys.modules[klass.__module__]), skip_first)
    return sorted(found.values(), key=lambda documented: documented.name)


# -- the tests -----------------------------------------------------------------------------

def takes_parameters(documented: Documented) -> bool:
    """Whether the callable has a parameter beyond ``self``/``cls``."""
    parameters = list(inspect.signature(documented.function).parameters)
    return len(parameters) > int(documented.skip_first)


CALLABLES = public_callables()
DOCUMENTED = [documented for documented in CALLABLES if documented.entries is not None]


def test_every_callable_with_parameters_has_an_args_section():
    undocumented = {d.name for d in CALLABLES if d.entries is None and takes_parameters(d)}
    assert not undocumented, "no Args section:\n" + "\n".join(sorted(undocumented))


@pytest.mark.parametrize("documented", DOCUMENTED, ids=lambda documented: documented.name)
def test_args_section_matches_signature(documented):
    report = check(documented.function, documented.entries, documented.namespace,
                   documented.skip_first)
    assert not report.problems, "\n".join(report.problems)


def test_the_checks_are_not_vacuous():
    """Most of the public API is checked, and most documented defaults are
    compared, not skipped as prose (the counts move with the API: the bounds are
    loose on purpose)."""
    reports = [check(d.function, d.entries, d.namespace, d.skip_first) for d in DOCUMENTED]
    compared = sum(report.defaults_compared for report in reports)
    skipped = sum(len(report.defaults_skipped) for report in reports)
    assert len(CALLABLES) >= 360 and len(DOCUMENTED) >= 285
    assert sum(report.parameters for report in reports) >= 830
    assert compared >= 230 and skipped <= compared // 10


def test_top_level_classes_document_their_arguments():
    """The classes :mod:`torch_geometric_stream` itself exports (the PyG-style
    modules) each have an ``Args:`` section for their constructor."""
    top = {f"{obj.__module__}.{obj.__qualname__}" for obj in
           (getattr(torch_geometric_stream, name) for name in torch_geometric_stream.__all__)
           if inspect.isclass(obj)}
    undocumented = [d.name for d in CALLABLES if d.name in top and d.entries is None]
    assert not undocumented


# -- the parser, on docstrings made up here ------------------------------------------------

SYNTHETIC = '''Scale ``x``.

    Args:
        x (Tensor): the rows.
        scale (float, optional): the factor. (default: ``2.0``)
        mode (str, optional): ``"a"`` or ``"b"``, each with a long
            description. (default: :obj:`"a"`)
        low, high (float, optional): the interval's ends. (default: ``0``)
        size (int): the rows' count, from ``x``. (default: the rows of ``x``)
        flag (bool, optional): ``True`` (the default) or ``False``.
        stale (int): a parameter that was removed.

    Returns:
        Tensor: not an argument (``nothing``: here).
    '''


def synthetic(x, scale=1.0, mode="a", low=0, high=1, size=None, flag=False, missing=3,
              **options):
    pass


def test_parser_reads_every_form_of_entry():
    entries = parse_args_section(SYNTHETIC)
    assert [entry.names for entry in entries] == [
        ("x",), ("scale",), ("mode",), ("low", "high"), ("size",), ("flag",), ("stale",)]
    assert [entry.optional for entry in entries] == [False, True, True, True, False, True,
                                                    False]
    assert entries[2].text == ('``"a"`` or ``"b"``, each with a long description. '
                               '(default: :obj:`"a"`)')
    defaults = [documented_default(entry.text) for entry in entries]
    assert defaults == [None, "``2.0``", ':obj:`"a"`', "``0``", "the rows of ``x``",
                        "``True``", None]
    assert [default_value(text, {}) for text in defaults[1:6]] == [2.0, "a", 0, UNSET, True]


def test_parser_catches_drift():
    """A wrong default, a parameter not documented, a documented name not in
    the signature, ``optional`` on a parameter without a default: each caught."""
    report = check(synthetic, parse_args_section(SYNTHETIC), {})
    assert sorted(report.problems) == sorted([
        "'scale' documents default '``2.0``', the signature has 1.0",
        "'high' documents default '``0``', the signature has 1",
        "'size' has a default but is not marked optional",
        "'flag' documents default '``True``', the signature has False",
        "'stale' documented but not a parameter",
        "'missing' not documented",
    ])
    assert report.parameters == 8 and report.defaults_compared == 5
    assert report.defaults_skipped == ["size: the rows of ``x``"]


def untyped(x, y=1, z=2, *values, **options):
    pass


def test_every_entry_is_typed_but_a_cross_reference():
    """An untyped entry is caught, also one that only starts as a cross-reference;
    a bare cross-reference and a typed variadic entry pass."""
    entries = parse_args_section("""Summary.

    Args:
        x: untyped.
        y: as for :func:`other`, and more.
        z: as in :func:`other`.
        *values, **options (optional): passed on.
    """)
    assert check(untyped, entries, {}).problems == ["'x' has no type", "'y' has no type"]


def test_a_default_is_marked_optional_in_every_section():
    """A typed entry of a parameter with a default lacks ``optional``: caught also
    in a section that marks no entry ``optional``."""
    entries = parse_args_section("""Summary.

    Args:
        x (int): typed.
        y (int): typed. (default: ``1``)
        z, *values, **options: see :func:`other`.
    """)
    assert check(untyped, entries, {}).problems == [
        "'y' has a default but is not marked optional"]


@pytest.mark.parametrize("default, value, expected", [
    ("``None``", None, True), ("0", 0.0, True), ("1e-3", 0.001, True), ("``1``", True, False),
    (":obj:`False`", 0, False), ('``"a"``', "b", False), ("``(-1, 1)``", (-1.0, 1.0), True),
    (":obj:`None`, exact", None, True), ("1: the paper's rule", 1, True),
    (":data:`LIMIT`", 7, True), (":data:`LIMIT`", 8, False),
])
def test_default_comparison(default, value, expected):
    documented = default_value(default, {"LIMIT": 7})
    assert documented is not UNSET and same_default(documented, value) is expected


@pytest.mark.parametrize("section, message", [
    ("Args:\n        x: one.\n        (int): no name.", "not an Args entry"),
    ("Args:\n        x (int: no closing parenthesis.", "unclosed type"),
    ("Args:\n        x (int) the colon is missing.", "no ':'"),
    ("Args:\n\n    Returns:\n        nothing.", "empty Args section"),
    ("Args:\n        x: one.\n\n    Args:\n        y: two.", "more than one Args"),
])
def test_parser_refuses_what_it_cannot_read(section, message):
    with pytest.raises(DocstringError, match=message):
        parse_args_section(f"Summary.\n\n    {section}\n    ")


def test_no_docstring_holds_a_control_character():
    r"""A backslash in a docstring that is not raw makes an escape: ``\to`` in
    ``:math:`(d,) \to (c,)``` is a tab and "o" (every docstring of the source
    files, private ones too, of the package, its tests and benchmarks)."""
    root = Path(__file__).resolve().parents[1]
    control = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")  # a tab too, but no newline
    found = []
    for folder in (PACKAGE, "tests", "benchmarks", "examples"):
        for path in sorted((root / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                     ast.AsyncFunctionDef)):
                    text = ast.get_docstring(node, clean=False)
                    if text and control.search(text):
                        found.append(f"{path.relative_to(root)}: {getattr(node, 'name', '')}")
    assert found == []
