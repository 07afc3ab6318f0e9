"""README.md and benchmarks/README.md as a reader uses them: every ```python block
runs, and every command line parses with the parser it is written for (nothing is
run), so an option renamed or a value no longer accepted fails here, not in a
reader's shell."""
from __future__ import annotations

import argparse
import ast
import builtins
import io
import itertools
import re
import shlex
import shutil
import subprocess
import sys
import tokenize
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, Callable, Iterator, NamedTuple, Optional

import pytest
import torch
from benchmark_script_helpers import SCRIPTS, built_parser

from torch_geometric_stream import SLeDGe
from torch_geometric_stream.cli import build_parser
from torch_geometric_stream.cli.arguments import parse_seeds
from torch_geometric_stream.cli.errors import UsageError
from torch_geometric_stream.cli.configs import resolve_config, resolve_stream_entries
from torch_geometric_stream.cli.run import (DEFAULT_MODEL, OVERRIDE_KEYS, STDIN,
                                            _check_checkpoint_flags, _check_stream_flags,
                                            synthetic_drift)
from torch_geometric_stream.cli.show_config import config_lines
from torch_geometric_stream.cli.tune import _run_argv, parse_grid
from torch_geometric_stream.datasets import is_stream_file, resolve_dataset_name

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "examples")]  # scripts by name
READMES = ["README.md", "benchmarks/README.md"]

from accuracy import _choice_tags  # noqa: E402


class Snippet(NamedTuple):
    """A piece of a README: its kind (a fence's language, ``""`` for none,
    ``"indented"`` or ``"inline"``), where it starts (``README.md:28``) and its text."""
    kind: str
    where: str
    text: str


def snippets(readme: str) -> Iterator[Snippet]:
    """The fenced blocks, indented code blocks and inline code spans of ``readme``."""
    text = (ROOT / readme).read_text(encoding="utf-8")

    def line_of(offset: int) -> str:
        return f"{readme}:{text.count(chr(10), 0, offset) + 1}"

    for fence in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.M | re.S):
        yield Snippet(fence[1], line_of(fence.start()), fence[2])
    prose = re.sub(r"^```.*?^```", lambda fence: re.sub(r"[^\n]", " ", fence[0]), text,
                   flags=re.M | re.S)  # the fences blanked, every offset kept
    for block in re.finditer(r"(?<=\n\n)(?: {4}.*\n)+", prose):
        yield Snippet("indented", line_of(block.start()), block[0])
    for span in re.finditer(r"(?<!`)`([^`]+)`(?!`)", prose):
        yield Snippet("inline", line_of(span.start()), " ".join(span[1].split()))


# --------------------------------------------------------------------------------------
# The ```python blocks
# --------------------------------------------------------------------------------------

def _rows(features: int, classes: int, samples: int = 24) -> Iterator[tuple[torch.Tensor, int]]:
    """A tiny stream: ``(x (features,), y)`` with class ``t % classes`` at ``t``, its
    rows apart by class."""
    generator = torch.Generator().manual_seed(0)
    for t in range(samples):
        yield torch.randn(features, generator=generator) + t % classes, t % classes


#: What a block reads without defining it (left to the reader), as the README
#: describes it, small: each block gets the names it reads, built afresh.
GIVEN: dict[str, Callable[[], Any]] = {
    # Quickstart: "your iterable of (x, y, is_labeled), y a class id in 0..3", x (16,)
    "my_stream": lambda: ((x, y, t % 3 == 0) for t, (x, y) in enumerate(_rows(16, 4))),
    # CUDAGraphStep and flush_denormal: (x, y) pairs, "y = -1 where the label is hidden";
    # 784 features, as the CUDAGraphStep block's model reads
    "stream": lambda: ((x, y if t % 3 == 0 else -1) for t, (x, y) in enumerate(_rows(784, 10))),
    # flush_denormal's learner
    "model": lambda: SLeDGe(784, 10, labeled_size=10, unlabeled_size=30, seed=0),
}

#: Sizes cut for the test's time: README text -> the text run instead. Each entry
#: must still be in its block.
SHRUNK = {
    # River's Phishing: the block took 32 s on its 1,250 rows, and 1.5 s on its first 50
    # once River was imported (AMD EPYC, 2 cores shared, 1 thread)
    "datasets.Phishing()": "datasets.Phishing().take(50)",
}

#: Modules of the package's optional extras (setup.py): a block importing one is
#: skipped where it is not installed.
EXTRAS = {"river", "capymoa"}


def _python_blocks() -> list[Snippet]:
    return [snippet for snippet in snippets("README.md") if snippet.kind == "python"]


def _free_names(tree: ast.Module) -> set[str]:
    """The names ``tree`` reads and never binds (nor imports), builtins left out."""
    bound = {node.id for node in ast.walk(tree)
             if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)}
    bound |= {node.name for node in ast.walk(tree)
              if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    bound |= {node.arg for node in ast.walk(tree) if isinstance(node, ast.arg)}
    bound |= {(alias.asname or alias.name).split(".")[0] for node in ast.walk(tree)
              if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    read = {node.id for node in ast.walk(tree)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    return read - bound - set(dir(builtins))


def _imported_roots(tree: ast.Module) -> set[str]:
    roots = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
             for alias in node.names}
    return roots | {node.module.split(".")[0] for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.module}


def _shown_values(source: str, tree: ast.Module) -> dict[int, Any]:
    """Line -> the value a top-level expression's comment shows for it, where the
    comment is a Python literal (``model_names()  # ['base', ...]``; ``...`` stands
    for any value)."""
    comments = {token.start[0]: token.string[1:].strip()
                for token in tokenize.generate_tokens(io.StringIO(source).readline)
                if token.type == tokenize.COMMENT}
    shown = {}
    for statement in tree.body:
        if isinstance(statement, ast.Expr) and statement.end_lineno in comments:
            try:
                shown[statement.lineno] = ast.literal_eval(comments[statement.end_lineno])
            except (ValueError, SyntaxError):
                pass
    return shown


def _matches(value: Any, shown: Any) -> bool:
    if shown is Ellipsis:
        return True
    if isinstance(shown, (tuple, list)):
        return (type(value) is type(shown) and len(value) == len(shown)
                and all(map(_matches, value, shown)))
    return value == shown


@pytest.mark.parametrize("block", _python_blocks(), ids=lambda block: block.where)
def test_python_block_runs(block):
    source = block.text
    for before, after in SHRUNK.items():
        if before in source:
            source = source.replace(before, after)
    tree = ast.parse(source)
    free = _free_names(tree)
    assert free <= GIVEN.keys(), f"{block.where} reads {sorted(free - GIVEN.keys())}: " \
                                 f"define them in the block, or give them in GIVEN"
    for module in sorted(_imported_roots(tree) & EXTRAS):
        pytest.importorskip(module)
    if '.to("cuda")' in source and not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    # each expression whose comment shows its value is kept, and compared
    shown = _shown_values(source, tree)
    for index, statement in enumerate(tree.body):
        if statement.lineno in shown:
            keep = ast.parse(f"_shown[{statement.lineno}] = 0").body[0]
            keep.value = statement.value
            tree.body[index] = ast.copy_location(keep, statement)
    namespace = {"_shown": {}, **{name: GIVEN[name]() for name in free}}
    exec(compile(ast.fix_missing_locations(tree), block.where, "exec"), namespace)
    for line, value in shown.items():
        ran = namespace["_shown"][line]
        assert _matches(ran, value), f"{block.where}, its line {line}: shows {value!r}, runs " \
                                     f"to {ran!r}"


def test_the_shrunk_texts_are_in_the_blocks():
    text = "".join(block.text for block in _python_blocks())
    assert [before for before in SHRUNK if before not in text] == []


# --------------------------------------------------------------------------------------
# The command lines
# --------------------------------------------------------------------------------------

#: Shell functions that print the words of a ``python`` or ``torch-geometric-stream``
#: command (each word ended by \x1f, each command begun by \x1e); any other command
#: does nothing.
_RECORDER = r"""
command_not_found_handle() { return 0; }
_record() { printf '\036'; printf '%s\037' "$@"; }
python() { _record python "$@"; }
torch-geometric-stream() { _record torch-geometric-stream "$@"; }
"""

#: Placeholders of the commands, whole words: README text -> what is parsed
#: (``None``: left out, ``...`` standing for the options of the reader's run).
PLACEHOLDERS: dict[str, Optional[str]] = {"...": None, "DIR": "data", "FILE": "run.ckpt",
                                          "N": "2", "R": "8", "LOW": "0", "HIGH": "1"}

#: ``python`` commands the READMEs show that are no command of the package or a
#: benchmark script (their own tools' options are not checked here).
OTHER_PYTHON_COMMANDS = [("-m", "pip"), ("-m", "pytest"), ("setup.py",)]


def shell_commands(script: str, folder: Path) -> list[list[str]]:
    """The ``python`` and ``torch-geometric-stream`` commands of shell text ``script``,
    each as its words after bash expanded them (line continuations, quotes, comments,
    variables, loops), placeholders replaced. Nothing is run: bash runs restricted (no
    output redirection, no command names with a slash), in ``folder``, whose only
    content is its empty ``PATH``, and every other command does nothing."""
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash to expand the README's shell lines")
    done = subprocess.run([bash, "-r", "-c", _RECORDER + script], cwd=folder,
                          env={"PATH": str(folder), "LC_ALL": "C"},
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, ""), f"bash on {script!r}: {done.stderr}"
    commands = []
    for record in done.stdout.split("\x1e")[1:]:
        words = [PLACEHOLDERS.get(word, word) for word in record.split("\x1f")[:-1]]
        commands.append([word for word in words if word is not None])
    return commands


def _shell_snippets(readme: str) -> list[Snippet]:
    """The snippets of ``readme`` that hold commands: the fenced ``bash``/``sh``
    blocks, the lines of an unlabeled fence that start with the prompt ``$ ``,
    indented blocks, and inline spans that are a whole command of the package or a
    benchmark script, also after environment assignments (not the command's mere
    name, ``python -m torch_geometric_stream``)."""
    found = []
    for snippet in snippets(readme):
        text = snippet.text
        if snippet.kind == "":
            text = "\n".join(line[2:] for line in text.splitlines() if line.startswith("$ "))
        elif snippet.kind == "inline":
            if not re.match(r"(?:\w+=\S* )*(?:(?:python -m torch_geometric_stream|"
                            r"torch-geometric-stream) \S|python benchmarks/)", text):
                continue
        elif snippet.kind not in ("bash", "sh", "indented"):
            continue
        if re.search(r"\b(?:python|torch-geometric-stream) ", text):
            found.append(snippet._replace(text=text))
    return found


def _fails(parse: Callable[[], Any]) -> Optional[str]:
    """What ``parse()`` says against its input: a :class:`UsageError` or an
    ``argparse`` usage error (its exit and message); ``None`` when it parses (or
    exits 0, as ``--help`` and ``--version`` do after printing)."""
    message = io.StringIO()
    try:
        with redirect_stderr(message), redirect_stdout(io.StringIO()):
            parse()
    except UsageError as error:
        return str(error)
    except SystemExit as error:
        return None if error.code == 0 else f"exit {error.code}: {message.getvalue().strip()}"
    return None


def _check_dataset(name: Optional[str]) -> None:
    """``--dataset NAME`` names a stream: a dataset, a synthetic one, a file or ``-``."""
    if name is None or name.strip() == STDIN or is_stream_file(name):
        return
    if synthetic_drift(name, None) is None:
        try:
            resolve_dataset_name(name)
        except ValueError as error:
            raise UsageError(str(error)) from None


def check_package_command(words: list[str]) -> None:
    """Parse ``python -m torch_geometric_stream WORDS`` as its parser does, and check
    what ``run`` and ``tune`` check of it before reading a stream: the seeds, the
    dataset's name, the stream and checkpoint options, every ``--grid`` value as
    the ``run`` option it becomes."""
    parser = build_parser()
    args = parser.parse_args(words)
    if args.command == "run":
        seeds = parse_seeds(args.seed)
        _check_checkpoint_flags(args, seeds)
        _check_stream_flags(args, seeds)
    if args.command == "tune":
        parse_seeds(args.seeds, "--seeds")
        parse_seeds(args.confirm_seeds, "--confirm-seeds")
        for key, values in parse_grid(args.grid).items():
            for value in values:
                parser.parse_args(_run_argv(args, {key: value}, 0, Path("point.json")))
    if args.command in ("run", "tune"):
        _check_dataset(args.dataset)


def check_script_command(script: str, words: list[str]) -> None:
    """Parse ``python benchmarks/SCRIPT.py WORDS`` with the script's parser;
    ``accuracy.py``'s ``run`` options (after ``--``, and each ``choices`` study's
    ``--choice``) with the package's ``run`` parser."""
    args = built_parser(script).parse_args(words)
    if script != "accuracy":
        return
    if args.command == "run":
        extra = args.extra[1:] if args.extra[:1] == ["--"] else args.extra
        option_sets = [extra]
    elif args.command == "choices":
        option_sets = list(_choice_tags(args.choice, args.device, args.cuda_graph, args.suffix,
                                        args.defaults_tag).values())
    else:
        return
    for options in option_sets:
        check_package_command(["run", "--dataset", "Shuttle", *options])


def check_command(words: list[str]) -> None:
    """Check a README command (:func:`check_package_command`,
    :func:`check_script_command`, or one of :data:`OTHER_PYTHON_COMMANDS`); an
    assertion error names it and what its parser says."""
    program, *rest = words
    if program == "torch-geometric-stream":
        rest = ["-m", "torch_geometric_stream", *rest]
    if rest[:2] == ["-m", "torch_geometric_stream"]:
        problem = _fails(lambda: check_package_command(rest[2:]))
    elif rest and re.fullmatch(r"benchmarks/\w+\.py", rest[0]):
        script = Path(rest[0]).stem
        assert script in SCRIPTS, f"{' '.join(words)}: no benchmark script {rest[0]}"
        problem = _fails(lambda: check_script_command(script, rest[1:]))
    else:
        assert any(tuple(rest[:len(other)]) == other for other in OTHER_PYTHON_COMMANDS), \
            f"{' '.join(words)}: neither the package, a benchmark script nor a known tool"
        return
    assert problem is None, f"{' '.join(words)}\n  {problem}"


@pytest.mark.parametrize("snippet", [snippet for readme in READMES
                                     for snippet in _shell_snippets(readme)],
                         ids=lambda snippet: snippet.where)
def test_command_line_parses(snippet, tmp_path):
    commands = shell_commands(snippet.text, tmp_path)
    assert commands, f"{snippet.where}: no command found in {snippet.text!r}"
    for words in commands:
        check_command(words)


def _subcommand(name: str) -> argparse.ArgumentParser:
    subparsers = next(action for action in build_parser()._actions
                      if isinstance(action, argparse._SubParsersAction))
    return subparsers.choices[name]


#: The options a command requires (and a value), added to a fragment without them.
FRAGMENT_REQUIRED = {"tune": {"--dataset": "GSAD"}}
#: The arguments a command requires, added to each of its fragments (the records
#: a ``compare`` fragment compares).
FRAGMENT_POSITIONALS = {"compare": ["runs/"]}

#: The command of a README.md span that starts with an option: ``run``, but for
#: these (``None``: an example's, ``examples/*.py``, only named).
FRAGMENT_COMMANDS: dict[str, Optional[str]] = {"--grid": "tune", "--out-dir": "tune",
                                               "--confirm-top": "tune", "--samples": None,
                                               "--baseline": "compare", "--by": "compare"}

#: Spans that start with an option and are no command: a formula.
NOT_FRAGMENTS = {"--num-layers n + 1"}


def _fragments() -> list[tuple[Snippet, str]]:
    """README.md's inline spans that are part of a package command, with the
    command: a command name, then an option or ``...`` (``run --model gsl --lam
    0.1``), or an option and what follows it (``--history bounded``)."""
    found = []
    for snippet in snippets("README.md"):
        if snippet.kind != "inline" or snippet.text in NOT_FRAGMENTS:
            continue
        if re.match(r"(?:run|tune|datasets) (?:--|\.\.\.)", snippet.text):
            found.append((snippet._replace(text=snippet.text.split(" ", 1)[1]),
                          snippet.text.split(" ", 1)[0]))
        elif snippet.text.startswith("--"):
            command = FRAGMENT_COMMANDS.get(snippet.text.split()[0], "run")
            if command is not None:
                found.append((snippet, command))
    return found


def _fragment_problem(snippet: Snippet, command: str) -> Optional[str]:
    """What ``command``'s parser says against fragment ``snippet``, or ``None``:
    the command completed by :data:`FRAGMENT_REQUIRED`; an option that ends the
    fragment without its value (``run --config``) only named; ``A|B`` each of A and B."""
    words = [PLACEHOLDERS.get(word, word) for word in shlex.split(snippet.text)]
    words = [word for word in words if word is not None]
    action = _subcommand(command)._option_string_actions.get(words[-1])
    if action is not None and action.nargs != 0:
        words.pop()
    for option, value in FRAGMENT_REQUIRED.get(command, {}).items():
        if option not in words:
            words += [option, value]
    words += FRAGMENT_POSITIONALS.get(command, [])
    for variant in itertools.product(*(word.split("|") for word in words)):
        problem = _fails(lambda: build_parser().parse_args([command, *variant]))
        if problem is not None:
            return f"{snippet.where}: {command} {' '.join(variant)}: {problem}"
    return None


def test_every_command_fragment_parses():
    fragments = _fragments()
    assert len(fragments) > 100  # README.md names about 180
    problems = [problem for problem in (_fragment_problem(*fragment) for fragment in fragments)
                if problem is not None]
    assert not problems, "\n".join(problems)


def _options(parser: argparse.ArgumentParser) -> set[str]:
    """The option strings of ``parser`` and its sub-commands."""
    options = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            options = options.union(*map(_options, action.choices.values()))
        options |= set(action.option_strings)
    return options


#: Option-like words of the READMEs' prose that stand for any option.
OPTION_PLACEHOLDERS = {"--option"}


def test_every_option_named_in_the_prose_exists():
    """An option named in an inline span (``--robust-window N``) is one of the
    package's, a benchmark script's or an example's (the examples are loaded as
    scripts, from ``examples/``)."""
    parsers = [build_parser(), *map(built_parser, SCRIPTS),
               *map(built_parser, sorted(path.stem for path in (ROOT / "examples").glob("*.py")))]
    known = set().union(*map(_options, parsers)) | OPTION_PLACEHOLDERS
    unknown = [f"{snippet.where}: {option}" for readme in READMES
               for snippet in snippets(readme) if snippet.kind == "inline"
               for option in re.findall(r"(?<![\w-])--[a-z][\w-]*", snippet.text)
               if option not in known]
    assert not unknown, "\n".join(unknown)


# --------------------------------------------------------------------------------------
# What a command prints
# --------------------------------------------------------------------------------------

def test_the_show_config_example_is_what_the_command_prints():
    """README.md's ``--show-config`` example, its configuration lines (the stream's
    line read for its class count and value range, not loaded): the lines it
    cuts short are package defaults, as many as it says, so a measured setting
    added to that cell, or a source reworded, fails here."""
    example = next(snippet for snippet in snippets("README.md")
                   if snippet.kind == "" and "--show-config\n" in snippet.text)
    command, stream, _, *shown = example.text.splitlines()
    args = build_parser().parse_args(shlex.split(command)[4:])
    classes, low, high = re.search(r"(\d+) classes, values in \[(\S+), (\S+)\]", stream).groups()
    model = args.model or DEFAULT_MODEL
    sources: dict[str, str] = {}
    config = resolve_config(args.dataset, args.label_ratio, model,
                            {key: getattr(args, key) for key in OVERRIDE_KEYS}, None,
                            num_classes=int(classes), preset=args.preset, sources=sources)
    resolve_stream_entries(config, model, (float(low), float(high)), sources)
    printed = [*config_lines(model, config, sources, None),
               "--show-config: nothing was run or written"]
    cut = next(index for index, line in enumerate(shown) if line.lstrip().startswith("..."))
    more = int(re.fullmatch(r" *\.\.\. \((\d+) more package defaults\)", shown[cut])[1])
    assert printed[cut:cut + more] == [line for line in printed[cut:cut + more]
                                       if line.endswith("  package default")]
    assert shown == printed[:cut] + [shown[cut]] + printed[cut + more:]


#: The folders a README names files of, and where each is in the repository.
REPOSITORY_FOLDERS = {"benchmarks/": "benchmarks/", "examples/": "examples/", "tests/": "tests/",
                      "torch_geometric_stream/": "torch_geometric_stream/",
                      "cli/": "torch_geometric_stream/cli/"}


#: What MANIFEST.in leaves out of the sdist: the README names them, and only a
#: checkout of the repository has them.
REPOSITORY_ONLY = ("benchmarks/results", "benchmarks/RESULTS.md")


def test_every_file_of_the_repository_named_is_there():
    """A path in an inline span of README.md (``benchmarks/RESULTS.md``,
    ``cli/configs.py``: the package's) names a file or folder of the checkout; in
    an unpacked sdist (no ``.git``), every one but :data:`REPOSITORY_ONLY`'s."""
    folders = "|".join(map(re.escape, REPOSITORY_FOLDERS))
    checkout = (ROOT / ".git").exists()
    missing = []
    for snippet in snippets("README.md"):
        found = re.match(rf"({folders})([\w./-]*)", snippet.text) if snippet.kind == "inline" \
            else None
        if not found or (not checkout and found[0].startswith(REPOSITORY_ONLY)):
            continue
        if not (ROOT / REPOSITORY_FOLDERS[found[1]] / found[2]).exists():
            missing.append(f"{snippet.where}: {found[0]}")
    assert not missing, "\n".join(missing)
