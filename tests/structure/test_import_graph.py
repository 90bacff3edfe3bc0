"""The packages' import graph: dependencies point downward, contracts are public modules.

sdk (``planscope``) <- collector <- analyzer; the dashboard and the reference runtime talk to the
collector over HTTP (the runtime's demo also starts one in-process). No module imports another
package's underscore (private) module, wherever the import is written (top level, function
body, ``TYPE_CHECKING``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {
    "planscope": "sdk",
    "planscope_collector": "collector",
    "planscope_analyzer": "analyzer",
    "planscope_dashboard": "dashboard",
    "planscope_runners": "runners",
}
# What each package may import (besides itself and third-party libraries).
ALLOWED: dict[str, set[str]] = {
    "planscope": set(),
    "planscope_collector": {"planscope"},
    "planscope_analyzer": {"planscope", "planscope_collector"},
    "planscope_dashboard": {"planscope"},
    # ``planscope demo`` starts a collector in-process next to the reference runtime.
    "planscope_runners": {"planscope", "planscope_collector"},
}


def _module_name(package: str, path: Path) -> str:
    rel = path.relative_to(ROOT / FOLDERS[package]).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(package: str, path: Path) -> Iterator[tuple[int, str]]:
    """Absolute names of the modules a file imports (``from x import y`` yields x and x.y)."""
    module = _module_name(package, path)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            yield node.lineno, target
            for alias in node.names:
                yield node.lineno, f"{target}.{alias.name}"


def _edges() -> Iterator[tuple[str, str, int, str]]:
    for package, folder in FOLDERS.items():
        for path in sorted((ROOT / folder / package).rglob("*.py")):
            for line, target in _imports(package, path):
                yield package, f"{path.relative_to(ROOT)}:{line}", line, target


def _is_private(target: str) -> bool:
    parts = target.split(".")[1:]
    return any(p.startswith("_") and not p.startswith("__") for p in parts)


def test_packages_depend_downward() -> None:
    wrong = []
    for package, where, _, target in _edges():
        top = target.split(".")[0]
        if top in FOLDERS and top != package and top not in ALLOWED[package]:
            wrong.append(f"{where}: {package} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_no_import_of_another_packages_private_module() -> None:
    wrong = []
    for package, where, _, target in _edges():
        top = target.split(".")[0]
        if top in FOLDERS and top != package and _is_private(target):
            wrong.append(f"{where}: {package} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_lower_layers_name_no_layer_above_even_in_strings() -> None:
    """Entry points (``planscope.commands``, ``planscope.collector_extensions``) find the
    components above; a lower package never spells their module names (importlib, strings)."""
    wrong = []
    for package, folder in FOLDERS.items():
        for path in sorted((ROOT / folder / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            above = [o for o in FOLDERS if o not in ALLOWED[package] | {package, "planscope"}]
            for other in above:
                if f"{other}." in text or f'"{other}"' in text:
                    wrong.append(f"{path.relative_to(ROOT)} names {other}")
    assert not wrong, "\n".join(wrong)


def test_every_command_and_extension_is_an_entry_point() -> None:
    from importlib.metadata import entry_points

    commands = {ep.name for ep in entry_points(group="planscope.commands")}
    assert {
        "serve",
        "migrate",
        "analyze",
        "alerts",
        "import",
        "dashboard",
        "run",
        "demo",
    } <= commands
    extensions = {ep.value for ep in entry_points(group="planscope.collector_extensions")}
    assert extensions == {
        "planscope_analyzer.service:extension",
        "planscope_analyzer.alerts.service:extension",
    }


@pytest.mark.parametrize("package", sorted(FOLDERS))
def test_graph_check_sees_imports(package: str) -> None:
    """The walk above finds each package's own modules (so an empty result means something)."""
    assert sum(1 for p, *_ in _edges() if p == package) > 5


# HTTP clients that do not talk to the collector (webhooks, an LLM judge, an OpenAI-compatible
# model, the dashboard's health page); everything that reads or writes the collector's API
# goes through the one client, ``planscope.client.CollectorClient``.
HTTP_ELSEWHERE = {
    "sdk/planscope/client.py",
    "analyzer/planscope_analyzer/alerts/_delivery.py",
    "analyzer/planscope_analyzer/attribution/_judge.py",
    "runners/planscope_runners/_models.py",
    "runners/planscope_runners/demo.py",
}


def test_one_client_of_the_collector_api() -> None:
    wrong = []
    for package, folder in FOLDERS.items():
        for path in sorted((ROOT / folder / package).rglob("*.py")):
            rel = str(path.relative_to(ROOT))
            if rel in HTTP_ELSEWHERE:
                continue
            if any(t.split(".")[0] == "httpx" for _, t in _imports(package, path)):
                wrong.append(f"{rel} imports httpx: use planscope.client.CollectorClient")
    assert not wrong, "\n".join(wrong)
