"""One configuration style and one registry of environment variables.

Every variable planscope reads is a constant of ``planscope.environment_variables``; the
settings models take their names from it (``validation_alias``), nothing reads the environment
at import time, and docs/configuration.md lists every variable once, generated from the
registry's docstrings. After changing the registry, rewrite the generated table with
``.venv/bin/python -m tests.structure.test_configuration``.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from planscope import environment_variables as ENV

from tests.structure.test_import_graph import FOLDERS, ROOT

REGISTRY = ROOT / "sdk" / "planscope" / "environment_variables.py"
DOC = ROOT / "docs" / "configuration.md"
BEGIN = "<!-- generated from planscope.environment_variables: do not edit by hand -->"
END = "<!-- end of the generated table -->"
NAME = re.compile(r"^(PLANSCOPE|OTEL|OPENAI)_[A-Z0-9_]+$")
EVERY = (*ENV.ALL, *ENV.OTEL_FALLBACKS, *ENV.OPENAI)


def _modules() -> Iterator[tuple[Path, ast.Module]]:
    for package, folder in FOLDERS.items():
        for path in sorted((ROOT / folder / package).rglob("*.py")):
            yield path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _settings_classes() -> dict[str, Any]:
    from planscope.client import ClientSettings
    from planscope_analyzer import AnalyzerSettings
    from planscope_analyzer.alerts import AlertSettings
    from planscope_collector import CollectorSettings

    return {
        "ClientSettings": (ClientSettings, ENV.CLIENT),
        "CollectorSettings": (CollectorSettings, ENV.COLLECTOR),
        "AnalyzerSettings": (AnalyzerSettings, ENV.ANALYZER),
        "AlertSettings": (AlertSettings, ENV.ALERTS),
    }


def _is_env_read(node: ast.AST) -> bool:
    """``os.environ``, ``os.getenv(...)`` or a bare ``environ`` / ``getenv``."""
    if isinstance(node, ast.Attribute):
        return node.attr in ("environ", "getenv")
    return isinstance(node, ast.Name) and node.id in ("environ", "getenv")


def _import_time_reads(tree: ast.Module) -> Iterator[int]:
    """Lines that read the environment while the module is imported: module and class bodies,
    decorators and default values (a function's body runs later)."""

    def visit(node: ast.AST) -> Iterator[int]:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            args = node.args
            for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
                yield from visit(default)
            for decorator in getattr(node, "decorator_list", []):
                yield from visit(decorator)
            return
        if _is_env_read(node):
            yield getattr(node, "lineno", 0)
        for child in ast.iter_child_nodes(node):
            yield from visit(child)

    yield from visit(tree)


def test_nothing_reads_the_environment_at_import_time() -> None:
    wrong = [
        f"{path.relative_to(ROOT)}:{line}"
        for path, tree in _modules()
        for line in _import_time_reads(tree)
    ]
    assert not wrong, "environment read at import time:\n" + "\n".join(wrong)


def test_the_check_sees_an_import_time_read() -> None:
    tree = ast.parse("import os\nX = os.environ.get('A')\ndef f(y=os.getenv('B')):\n    os.environ")
    assert list(_import_time_reads(tree)) == [2, 3]


def test_variable_names_are_spelled_only_in_the_registry() -> None:
    """Code reads ``ENV.PLANSCOPE_X``, never the string ``"PLANSCOPE_X"``."""
    wrong = []
    for path, tree in _modules():
        if path == REGISTRY:
            continue
        for node in ast.walk(tree):
            is_name = isinstance(node, ast.Constant) and isinstance(node.value, str)
            if is_name and NAME.match(node.value):
                wrong.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert not wrong, "\n".join(wrong)


def test_every_settings_model_reads_registry_names_only() -> None:
    """Each pydantic-settings model reads exactly its registry tuple, through aliases (never an
    ``env_prefix`` that would derive names the registry does not list)."""
    declared = {
        node.name
        for _, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and any(isinstance(b, ast.Name) and b.id == "BaseSettings" for b in node.bases)
    }
    models = _settings_classes()
    assert declared == set(models), "a settings model this test does not check"
    for name, (model, names) in models.items():
        assert not model.model_config.get("env_prefix"), name
        aliases = {f.validation_alias for f in model.model_fields.values() if f.validation_alias}
        expected = set(names) - {ENV.PLANSCOPE_COLLECTOR_URL}  # the deprecated fallback
        assert aliases == expected, name


def test_every_registry_variable_is_read_somewhere() -> None:
    aliases = {
        f.validation_alias
        for model, _ in _settings_classes().values()
        for f in model.model_fields.values()
    }
    used: set[str] = set()
    for path, tree in _modules():
        if path == REGISTRY:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                used.add(node.attr)
            elif isinstance(node, ast.Name):
                used.add(node.id)
            elif isinstance(node, ast.alias):
                used.add(node.name)
    unread = [name for name in EVERY if name not in aliases | used]
    assert not unread, f"listed but read by nothing: {unread}"


# -- the generated documentation -----------------------------------------------------------

_READERS = {
    "SDK": "agent (`configure()`)",
    "OTEL_FALLBACKS": "agent (`configure()`), fallback",
    "CLIENT": "commands, dashboard (`ClientSettings`)",
    "COLLECTOR": "collector (`CollectorSettings`)",
    "ANALYZER": "analyzer (`AnalyzerSettings`)",
    "ALERTS": "alerting (`AlertSettings`)",
    "OPENAI": "runtime, attribution judge",
}


def _docstrings() -> dict[str, str]:
    """Each constant's docstring (the string statement right after its assignment)."""
    body = ast.parse(REGISTRY.read_text(encoding="utf-8")).body
    out: dict[str, str] = {}
    for node, after in itertools.pairwise(body):
        target = node.target if isinstance(node, ast.AnnAssign) else None
        documented = isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
        if isinstance(target, ast.Name) and NAME.match(target.id) and documented:
            out[target.id] = str(after.value.value)
    return out


def _default(name: str) -> str:
    for model, _ in _settings_classes().values():
        for field in model.model_fields.values():
            if field.validation_alias != name:
                continue
            value = field.default
            if value is None or field.default_factory is not None:
                return "—"
            if isinstance(value, bool):
                return f"`{str(value).lower()}`"
            if isinstance(value, int) and name.endswith("_BYTES") and value >= 1 << 20:
                return f"{value >> 20} MiB" if value < 1 << 30 else f"{value >> 30} GiB"
            return f"`{value}`"
    return "(in meaning)"


def render() -> str:
    """The table of docs/configuration.md, from the registry."""
    docs = _docstrings()
    rows = [
        "| variable | read by | default | meaning |",
        "|---|---|---|---|",
    ]
    for name in EVERY:
        readers = [text for group, text in _READERS.items() if name in getattr(ENV, group)]
        meaning = " ".join(docs[name].split()).replace("``", "`").replace("|", "\\|")
        rows.append(f"| `{name}` | {'; '.join(readers)} | {_default(name)} | {meaning} |")
    return "\n".join([BEGIN, "", *rows, "", END])


def _generated_part(text: str) -> str:
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[start:end]


def test_every_variable_has_a_docstring() -> None:
    missing = [name for name in EVERY if name not in _docstrings()]
    assert not missing, missing


def test_docs_list_every_variable_once_as_generated() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert _generated_part(text) == render(), (
        "docs/configuration.md is out of date: run "
        "`.venv/bin/python -m tests.structure.test_configuration`"
    )


def test_no_other_doc_tabulates_a_variable() -> None:
    """Other pages link to docs/configuration.md instead of keeping a second table."""
    row = re.compile(r"^\| `(PLANSCOPE|OTEL)_[A-Z0-9_]+`")
    wrong = [
        f"{path.name}: {line}"
        for path in sorted((ROOT / "docs").glob("*.md"))
        if path != DOC
        for line in path.read_text(encoding="utf-8").splitlines()
        if row.match(line)
    ]
    assert not wrong, "\n".join(wrong)


# Names that are not planscope's settings: the test suite's own knobs and the deployment files'
# interpolation variables (docs/configuration.md, "Not in the registry").
NOT_SETTINGS = {
    "PLANSCOPE_FUZZ_EXAMPLES",
    "PLANSCOPE_UPDATE_SCREENSHOTS",
    "PLANSCOPE_UPDATE_CONFORMANCE",
    "PLANSCOPE_TEST_CLICKHOUSE_URL",
    "PLANSCOPE_TEST_CLICKHOUSE_CLUSTER",
    "PLANSCOPE_DASHBOARD_KEY",
    "PLANSCOPE_KEYS_FILE",
}


def test_docs_and_deploy_files_name_only_real_variables() -> None:
    """A variable the docs or a deployment file sets exists (no typo, no removed name)."""
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    paths += sorted(p for p in (ROOT / "deploy").rglob("*") if p.is_file())
    known = set(EVERY) | NOT_SETTINGS
    wrong = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in paths
        for name in re.findall(r"PLANSCOPE_[A-Z0-9_]*[A-Z0-9]", path.read_text(errors="replace"))
        if name not in known
    }
    text = DOC.read_text(encoding="utf-8")
    assert all(f"`{name}`" in text for name in NOT_SETTINGS), "list them in configuration.md"
    assert not wrong, "\n".join(sorted(wrong))


if __name__ == "__main__":
    current = DOC.read_text(encoding="utf-8")
    DOC.write_text(current.replace(_generated_part(current), render()), encoding="utf-8")
    print(f"rewrote the table in {DOC.relative_to(ROOT)}")
