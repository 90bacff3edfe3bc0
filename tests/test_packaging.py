"""The package's promises: a light base install, and server commands that name their extra."""

from __future__ import annotations

import subprocess
import sys
import tomllib
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
