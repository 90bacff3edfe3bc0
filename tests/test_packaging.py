"""The package's promises: a light base install, and server commands that name their extra."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_base_install_depends_on_the_otel_api_only() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = sorted(d.split(">")[0].split("=")[0].strip() for d in project["dependencies"])
    assert names == ["opentelemetry-api", "typing-extensions"]


def test_importing_the_sdk_loads_no_server_or_ui_modules() -> None:
    code = (
        "import sys, planscope\n"
        "heavy = [m for m in ('fastapi', 'uvicorn', 'chdb', 'clickhouse_connect', 'streamlit',"
        " 'plotly', 'pydantic', 'opentelemetry.sdk', 'planscope_collector') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_server_command_without_the_extra_names_the_install_command() -> None:
    code = (
        "import sys; sys.modules['planscope_collector'] = None\n"
        "from planscope._cli import main; main(['serve'])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 2
    assert "pip install 'planscope[server]'" in out.stderr


def test_invalid_settings_are_a_clear_error(tmp_path: Path) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "planscope",
            "serve",
            "--port",
            "70000",
            "--data-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2
    assert "planscope: error: argument --port: 70000 is out of range" in out.stderr
    out = subprocess.run(
        [sys.executable, "-m", "planscope", "migrate", "--clickhouse-url", "ftp://x"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr
    line = out.stderr.strip()
    assert (
        line.startswith("planscope: error: invalid settings: clickhouse_url: ") and "\n" not in line
    )


def test_python_m_planscope_beside_a_folder_named_planscope_keeps_its_subcommands(
    tmp_path: Path,
) -> None:
    (tmp_path / "planscope").mkdir()  # e.g. the clone itself, seen from its parent folder
    out = subprocess.run(
        [sys.executable, "-m", "planscope", "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    for command in ("run", "analyze", "alerts", "import", "dashboard"):
        assert f"    {command}" in out.stdout, out.stdout


def test_make_bench_runs_every_benchmark() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import run_all
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    scripts = {p.stem for p in (ROOT / "benchmarks").glob("*.py") if not p.stem.startswith("_")}
    assert set(run_all.BENCHMARKS) == scripts - {"run_all"}


def test_the_store_and_the_analyzer_import_without_the_collectors_web_app() -> None:
    """The collector package imports its app lazily: the analyzer (and a rules worker, and
    every `planscope` command) that only reads the store does not pay for FastAPI."""
    code = (
        "import sys, planscope_collector.storage, planscope_analyzer.detectors\n"
        "heavy = [m for m in ('fastapi', 'uvicorn', 'starlette', 'planscope_collector._app',"
        " 'planscope_collector._server') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_every_name_the_collector_exports_still_resolves() -> None:
    """The lazy ``__init__`` keeps the public surface: each name of ``__all__`` is the object
    of the module that defines it, ``from ... import *`` and ``dir`` see them all."""
    code = (
        "import importlib, planscope_collector as c\n"
        "assert 'create_app' not in vars(c)\n"
        "for name in c.__all__:\n"
        "    value = getattr(c, name)\n"
        "    module = importlib.import_module(c._SOURCES[name], 'planscope_collector')\n"
        "    assert value is getattr(module, name), name\n"
        "assert set(c.__all__) == set(c._SOURCES) and set(c.__all__) <= set(dir(c))\n"
        "ns = {}\n"
        "exec('from planscope_collector import *', ns)\n"
        "assert set(c.__all__) <= set(ns)\n"
        "try:\n"
        "    c.no_such_name\n"
        "except AttributeError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "module 'planscope_collector' has no attribute 'no_such_name'"


def _bound_twice(tree: ast.Module) -> list[str]:
    """Names a module binds twice at its top level (a function, a class or an assignment; an
    ``@overload`` stub is no binding)."""
    seen: Counter[str] = Counter()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if not any(
                getattr(d, "id", getattr(d, "attr", "")) == "overload" for d in node.decorator_list
            ):
                seen[node.name] += 1
        elif isinstance(node, ast.Assign):
            seen.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            seen[node.target.id] += 1
    return sorted(name for name, n in seen.items() if n > 1 and name != "__all__")


def test_no_module_binds_a_top_level_name_twice() -> None:
    """A second ``_FENCE = ...`` further down a module silently replaces the first for every
    function above it (two branches merged, each adding its own): one name, one binding."""
    found = {
        str(path.relative_to(ROOT)): names
        for package in ("sdk", "collector", "analyzer", "dashboard", "runners")
        for path in sorted((ROOT / package).rglob("*.py"))
        if (names := _bound_twice(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert found == {}
