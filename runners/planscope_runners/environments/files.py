"""A file-system workspace in a temporary directory: read, write, append, move, list, delete.

``delete_file`` is irreversible. ``append_file`` is a read-modify-write, so parallel appends to
one file lose a line. Paths are relative to the workspace and may not escape it.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._env import IRREVERSIBLE, READ, WRITE, Check, StepSpec, Task, Tool, read_modify_write_gap
from .._errors import ToolError

NAME = "files"


class FilesEnv:
    """A workspace directory, recreated for every task."""

    name = NAME

    def __init__(self, latency: float = 0.0, root: Path | None = None) -> None:
        self.latency = latency
        self._owned = root is None
        self.root = Path(root) if root is not None else Path(tempfile.mkdtemp(prefix="ps-ws-"))
        # Also removed when an unclosed env is collected or the interpreter exits: suites build
        # environments only to list their tools and never close them.
        self._cleanup = (
            weakref.finalize(self, shutil.rmtree, self.root, True) if self._owned else None
        )
        self.lock = threading.Lock()
        self._tools = {t.name: t for t in self._build_tools()}

    def tools(self) -> Mapping[str, Tool]:
        return self._tools

    def reset(self, task: Task) -> None:
        with self.lock:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root.mkdir(parents=True)
        task.setup(self)

    def close(self) -> None:
        if self._cleanup is not None:
            self._cleanup()

    def path(self, relative: str) -> Path:
        """The absolute path of a workspace path; refuses escapes."""
        if not isinstance(relative, str) or not relative:
            raise ToolError(f"path must be a non-empty string, got {relative!r}")
        target = (self.root / relative).resolve()
        if not target.is_relative_to(self.root.resolve()):
            raise ToolError(f"path {relative!r} escapes the workspace")
        return target

    def seed(self, files: Mapping[str, str]) -> None:
        """Create files (for task setups)."""
        for name, text in files.items():
            p = self.path(name)
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)

    # --- tools ----------------------------------------------------------------------------
    def _pause(self) -> None:
        if self.latency:
            time.sleep(self.latency)

    def read_file(self, path: str) -> str:
        self._pause()
        p = self.path(path)
        if not p.is_file():
            raise ToolError(f"no such file: {path}")
        return p.read_text()

    def write_file(self, path: str, text: str) -> int:
        self._pause()
        p = self.path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(str(text))
        return len(str(text))

    def append_file(self, path: str, line: str) -> int:
        self._pause()
        p = self.path(path)
        current = p.read_text() if p.is_file() else ""
        read_modify_write_gap()  # parallel appends race here
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(current + f"{line}\n")
        return len(current.splitlines()) + 1

    def move_file(self, src: str, dst: str) -> str:
        self._pause()
        source, target = self.path(src), self.path(dst)
        if not source.is_file():
            raise ToolError(f"no such file: {src}")
        if target.exists():
            raise ToolError(f"destination exists: {dst}")
        target.parent.mkdir(parents=True, exist_ok=True)
        source.rename(target)
        return dst

    def list_dir(self, path: str) -> list[str]:
        self._pause()
        p = self.path(path)
        if not p.is_dir():
            raise ToolError(f"no such directory: {path}")
        return sorted(child.name for child in p.iterdir())

    def delete_file(self, path: str) -> str:
        self._pause()
        p = self.path(path)
        if not p.is_file():
            raise ToolError(f"no such file: {path}")
        p.unlink()
        return f"deleted {path}"

    def _build_tools(self) -> list[Tool]:
        return [
            Tool(
                "read_file",
                "Read a text file",
                {"path": "string"},
                READ,
                lambda a: f"file:{a.get('path')}",
                self.read_file,
            ),
            Tool(
                "write_file",
                "Write a text file",
                {"path": "string", "text": "string"},
                WRITE,
                lambda a: f"file:{a.get('path')}",
                self.write_file,
            ),
            Tool(
                "append_file",
                "Append a line to a text file",
                {"path": "string", "line": "string"},
                WRITE,
                lambda a: f"file:{a.get('path')}",
                self.append_file,
            ),
            Tool(
                "move_file",
                "Move a file",
                {"src": "string", "dst": "string"},
                WRITE,
                lambda a: f"file:{a.get('src')}",
                self.move_file,
            ),
            Tool(
                "list_dir",
                "List a directory",
                {"path": "string"},
                READ,
                lambda a: f"dir:{a.get('path')}",
                self.list_dir,
            ),
            Tool(
                "delete_file",
                "Delete a file (cannot be undone)",
                {"path": "string"},
                IRREVERSIBLE,
                lambda a: f"file:{a.get('path')}",
                self.delete_file,
            ),
        ]


# --- tasks ----------------------------------------------------------------------------------
def merge_task(task_id: str, parts: list[str], out: str) -> Task:
    """Wide: read several files in parallel, write their concatenation."""
    contents = {p: f"section {p}: {i * 7 + 3} items" for i, p in enumerate(parts)}

    def setup(env: Any) -> None:
        env.seed({f"reports/{p}.txt": text for p, text in contents.items()})

    expected = "\n".join(contents[p] for p in parts)

    def check(env: Any) -> Check:
        p = env.path(f"out/{out}")
        got = p.read_text() if p.is_file() else None
        return Check(got == expected, f"out/{out} = {got!r}")

    reads = tuple(
        StepSpec(
            f"read_{p}",
            f"read reports/{p}.txt",
            "read_file",
            {"path": f"reports/{p}.txt"},
            produces=f"part_{i}",
            executor=f"reader-{i % 3}",
        )
        for i, p in enumerate(parts)
    )
    text = "\n".join(f"{{$part_{i}}}" for i in range(len(parts)))
    write = StepSpec(
        "write",
        "write out/{out}",
        "write_file",
        {"path": "out/{out}", "text": text},
        tuple(s.id for s in reads),
        executor="writer",
    )
    return Task(
        id=task_id,
        env=NAME,
        objective=f"Merge the reports {', '.join(parts)} into out/{{out}}",
        facts={"out": out},
        misread={"out": "summary.txt" if out != "summary.txt" else "report.txt"},
        steps=(*reads, write),
        setup=setup,
        check=check,
        shape="wide",
    )


def archive_task(task_id: str, name: str, archive: str) -> Task:
    """A chain with an irreversible delete: copy to the archive, verify, delete, log."""
    original = f"inbox/{name}"
    text = f"contents of {name}\n"

    def setup(env: Any) -> None:
        env.seed({original: text})

    def check(env: Any) -> Check:
        copy = env.path(f"{archive}/{name}")
        if not copy.is_file() or copy.read_text() != text:
            return Check(False, f"{archive}/{name} missing or wrong")
        if env.path(original).exists():
            return Check(False, f"{original} still exists")
        log = env.path("archive.log")
        want = f"archived {name} to {archive}\n"
        return Check(log.is_file() and log.read_text() == want, "archive.log wrong")

    return Task(
        id=task_id,
        env=NAME,
        objective=f"Archive {original} into {{archive}}/, delete the original and log it",
        facts={"archive": archive},
        misread={"archive": "tmp"},
        steps=(
            StepSpec("read", f"read {original}", "read_file", {"path": original}, produces="text"),
            StepSpec(
                "copy",
                "write the copy into {archive}/",
                "write_file",
                {"path": f"{{archive}}/{name}", "text": "{$text}"},
                ("read",),
            ),
            StepSpec(
                "verify",
                "read the copy back",
                "read_file",
                {"path": f"{{archive}}/{name}"},
                ("copy",),
                produces="copy",
            ),
            StepSpec(
                "delete",
                f"delete {original}",
                "delete_file",
                {"path": original},
                ("verify",),
                executor="janitor",
            ),
            StepSpec(
                "log",
                "log the archival",
                "append_file",
                {"path": "archive.log", "line": f"archived {name} to {{archive}}"},
                ("delete",),
                executor="janitor",
            ),
        ),
        setup=setup,
        check=check,
        shape="chain",
    )


def changelog_task(task_id: str, version: str, lines: list[str]) -> Task:
    """Two appends to one file (serialised by an edge) next to an independent version bump."""

    def setup(env: Any) -> None:
        env.seed({"CHANGELOG.md": "# Changelog\n", "VERSION": "0.0.0\n"})

    def check(env: Any) -> Check:
        want = "# Changelog\n" + "".join(f"{line}\n" for line in lines)
        got = env.path("CHANGELOG.md").read_text()
        if got != want:
            return Check(False, f"CHANGELOG.md = {got!r}")
        ver = env.path("VERSION").read_text()
        return Check(ver == version, f"VERSION = {ver!r}")

    return Task(
        id=task_id,
        env=NAME,
        objective="Add the changelog entries and set VERSION to {version}",
        facts={"version": version},
        misread={"version": "0.0.1"},
        steps=(
            StepSpec(
                "line_a",
                "append the first changelog line",
                "append_file",
                {"path": "CHANGELOG.md", "line": lines[0]},
                executor="writer-a",
            ),
            StepSpec(
                "line_b",
                "append the second changelog line",
                "append_file",
                {"path": "CHANGELOG.md", "line": lines[1]},
                ("line_a",),
                executor="writer-b",
            ),
            StepSpec(
                "bump",
                "write VERSION {version}",
                "write_file",
                {"path": "VERSION", "text": "{version}"},
            ),
            StepSpec(
                "check",
                "read the changelog back",
                "read_file",
                {"path": "CHANGELOG.md"},
                ("line_b", "bump"),
                produces="changelog",
            ),
        ),
        setup=setup,
        check=check,
        shape="diamond",
    )


def rename_task(task_id: str, files: list[str], prefix: str) -> Task:
    """Fan-out: list a directory, move every file under a prefix in parallel, write an index."""

    def setup(env: Any) -> None:
        env.seed({f"drafts/{f}": f"draft {f}\n" for f in files})

    def check(env: Any) -> Check:
        published = env.path("published")
        names = [p.name for p in published.iterdir()] if published.is_dir() else []
        moved = sorted(n for n in names if n != "INDEX")
        want = sorted(f"{prefix}-{f}" for f in files)
        if moved != want:
            return Check(False, f"published/ = {moved}, expected {want}")
        index = env.path("published/INDEX")
        return Check(index.is_file() and index.read_text() == ",".join(files), "INDEX wrong")

    moves = tuple(
        StepSpec(
            f"move_{i}",
            f"publish {f} as {{prefix}}-{f}",
            "move_file",
            {"src": f"drafts/{f}", "dst": f"published/{{prefix}}-{f}"},
            ("list",),
            executor=f"mover-{i % 2}",
        )
        for i, f in enumerate(files)
    )
    return Task(
        id=task_id,
        env=NAME,
        objective="Publish every draft under the prefix {prefix} and write an index",
        facts={"prefix": prefix},
        misread={"prefix": "draft"},
        steps=(
            StepSpec("list", "list drafts/", "list_dir", {"path": "drafts"}, produces="drafts"),
            *moves,
            StepSpec(
                "index",
                "write published/INDEX",
                "write_file",
                {"path": "published/INDEX", "text": ",".join(files)},
                tuple(m.id for m in moves),
            ),
        ),
        setup=setup,
        check=check,
        shape="fanout",
    )


TASKS: tuple[Task, ...] = (
    merge_task("files-merge-3", ["north", "south", "east"], "q3.txt"),
    merge_task("files-merge-6", ["a", "b", "c", "d", "e", "f"], "all.txt"),
    archive_task("files-archive-invoice", "invoice-42.pdf", "archive/2026"),
    archive_task("files-archive-contract", "contract.txt", "legal"),
    archive_task("files-archive-notes", "notes.md", "cold"),
    changelog_task("files-changelog-1", "1.2.0", ["- fix crash on start", "- add dark mode"]),
    changelog_task("files-changelog-2", "2.0.0", ["- drop python 3.8", "- new CLI"]),
    rename_task("files-publish-3", ["intro.md", "guide.md", "faq.md"], "v1"),
    rename_task("files-publish-5", ["a.md", "b.md", "c.md", "d.md", "e.md"], "2026"),
    merge_task("files-merge-2", ["jan", "feb"], "summary.txt"),
)
