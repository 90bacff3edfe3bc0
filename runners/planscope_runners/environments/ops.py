"""Ops: a key-value config store, a service registry, an artifact registry and deployments.

``deploy`` is irreversible (a deployment record cannot be taken back); ``append_config`` is a
read-modify-write, so two parallel appends to one key lose an update.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from .._env import IRREVERSIBLE, READ, WRITE, Check, StepSpec, Task, Tool, read_modify_write_gap
from .._errors import ToolError

NAME = "ops"

SERVICES = {
    "api": {"version": "1.4.0", "replicas": 3},
    "billing": {"version": "2.0.1", "replicas": 2},
    "search": {"version": "0.9.7", "replicas": 4},
    "auth": {"version": "3.2.0", "replicas": 2},
    "notify": {"version": "1.1.0", "replicas": 1},
}
ARTIFACTS = {
    "api": ["1.4.0", "1.5.0", "1.5.1"],
    "billing": ["2.0.1", "2.1.0"],
    "search": ["0.9.7", "1.0.0"],
    "auth": ["3.2.0", "3.3.0"],
    "notify": ["1.1.0", "1.2.0"],
}


class OpsEnv:
    """Config store + service registry + deployments, in memory (thread-safe per operation)."""

    name = NAME

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency
        self.lock = threading.Lock()
        self.config: dict[str, Any] = {}
        self.services: dict[str, dict[str, Any]] = {}
        self.artifacts: dict[str, list[str]] = {}
        self.deployments: list[dict[str, Any]] = []
        self._tools = {t.name: t for t in self._build_tools()}

    # --- Environment protocol -------------------------------------------------------------
    def tools(self) -> Mapping[str, Tool]:
        return self._tools

    def reset(self, task: Task) -> None:
        with self.lock:
            self.config = {"release-notes": [], "scale-log": []}
            self.services = {k: dict(v, healthy=True) for k, v in SERVICES.items()}
            self.artifacts = {k: list(v) for k, v in ARTIFACTS.items()}
            self.deployments = []
        task.setup(self)

    def close(self) -> None:
        return None

    # --- tools ----------------------------------------------------------------------------
    def _pause(self) -> None:
        if self.latency:
            time.sleep(self.latency)

    def _service(self, name: str) -> dict[str, Any]:
        service = self.services.get(name)
        if service is None:
            raise ToolError(f"unknown service {name!r}")
        return service

    def get_config(self, key: str) -> Any:
        self._pause()
        with self.lock:
            if key not in self.config:
                raise ToolError(f"config key {key!r} not found")
            value = self.config[key]
            return list(value) if isinstance(value, list) else value

    def set_config(self, key: str, value: Any) -> str:
        self._pause()
        with self.lock:
            self.config[key] = value
        return f"{key} set"

    def append_config(self, key: str, item: Any) -> int:
        self._pause()
        with self.lock:
            current = list(self.config.get(key) or [])
        read_modify_write_gap()  # parallel appends race here
        current.append(item)
        with self.lock:
            self.config[key] = current
        return len(current)

    def get_service(self, name: str) -> dict[str, Any]:
        self._pause()
        with self.lock:
            return dict(self._service(name), name=name)

    def check_health(self, name: str) -> str:
        self._pause()
        with self.lock:
            return "healthy" if self._service(name)["healthy"] else "unhealthy"

    def scale_service(self, name: str, replicas: int) -> int:
        self._pause()
        if not isinstance(replicas, int) or replicas < 0:
            raise ToolError(f"replicas must be a non-negative integer, got {replicas!r}")
        with self.lock:
            self._service(name)["replicas"] = replicas
        return replicas

    def list_artifacts(self, service: str) -> list[str]:
        self._pause()
        with self.lock:
            return list(self.artifacts.get(service, []))

    def deploy(self, service: str, version: str, region: str) -> str:
        self._pause()
        with self.lock:
            svc = self._service(service)
            if version not in self.artifacts.get(service, []):
                raise ToolError(f"artifact {service}:{version} not found in the registry")
            svc["version"] = version
            self.deployments.append({"service": service, "version": version, "region": region})
            return f"deployed {service}:{version} to {region}"

    def _build_tools(self) -> list[Tool]:
        return [
            Tool(
                "get_config",
                "Read a config value",
                {"key": "string"},
                READ,
                lambda a: f"config:{a.get('key')}",
                self.get_config,
            ),
            Tool(
                "set_config",
                "Write a config value",
                {"key": "string", "value": "string"},
                WRITE,
                lambda a: f"config:{a.get('key')}",
                self.set_config,
            ),
            Tool(
                "append_config",
                "Append an item to a list-valued config key",
                {"key": "string", "item": "string"},
                WRITE,
                lambda a: f"config:{a.get('key')}",
                self.append_config,
            ),
            Tool(
                "get_service",
                "Read a service's registry entry",
                {"name": "string"},
                READ,
                lambda a: f"service:{a.get('name')}",
                self.get_service,
            ),
            Tool(
                "check_health",
                "Check a service's health",
                {"name": "string"},
                READ,
                lambda a: f"service:{a.get('name')}",
                self.check_health,
            ),
            Tool(
                "scale_service",
                "Set a service's replica count",
                {"name": "string", "replicas": "integer"},
                WRITE,
                lambda a: f"service:{a.get('name')}",
                self.scale_service,
            ),
            Tool(
                "list_artifacts",
                "List the versions of a service in the artifact registry",
                {"service": "string"},
                READ,
                lambda a: f"artifacts:{a.get('service')}",
                self.list_artifacts,
            ),
            Tool(
                "deploy",
                "Deploy a service version to a region (cannot be undone)",
                {"service": "string", "version": "string", "region": "string"},
                IRREVERSIBLE,
                lambda a: f"deploy:{a.get('service')}@{a.get('region')}",
                self.deploy,
            ),
        ]


# --- tasks ----------------------------------------------------------------------------------
def _noop(env: Any) -> None:
    return None


def deploy_task(task_id: str, service: str, version: str, region: str, wrong: str) -> Task:
    """A chain: inspect, verify the artifact, check health, record the version, deploy."""

    def check(env: Any) -> Check:
        want = {"service": service, "version": version, "region": region}
        if env.deployments != [want]:
            return Check(False, f"deployments {env.deployments} != [{want}]")
        if env.config.get(f"{service}.version") != version:
            return Check(False, f"config {service}.version is {env.config.get(service)!r}")
        return Check(True)

    return Task(
        id=task_id,
        env=NAME,
        objective="Deploy {service} version {version} to {region} and record it in the config",
        facts={"service": service, "version": version, "region": region},
        misread={"version": wrong, "region": "us-east-1"},
        steps=(
            StepSpec(
                "inspect",
                "read the {service} registry entry",
                "get_service",
                {"name": "{service}"},
                produces="svc",
            ),
            StepSpec(
                "artifacts",
                "list {service} artifacts",
                "list_artifacts",
                {"service": "{service}"},
                ("inspect",),
                produces="versions",
            ),
            StepSpec(
                "health",
                "check {service} health",
                "check_health",
                {"name": "{service}"},
                ("artifacts",),
                produces="health",
            ),
            StepSpec(
                "record",
                "record {version} as {service}'s version",
                "set_config",
                {"key": "{service}.version", "value": "{version}"},
                ("health",),
                executor="config-worker",
            ),
            StepSpec(
                "deploy",
                "deploy {service} {version} to {region}",
                "deploy",
                {"service": "{service}", "version": "{version}", "region": "{region}"},
                ("record",),
                executor="deployer",
            ),
        ),
        setup=_noop,
        check=check,
        shape="chain",
    )


def audit_task(task_id: str, keys: list[str], owner: str) -> Task:
    """Wide: read many config keys in parallel, then write one summary."""
    values = {k: f"{k}-value-{i}" for i, k in enumerate(keys)}

    def setup(env: Any) -> None:
        env.config.update(values)

    expected = ";".join(values[k] for k in keys)

    def check(env: Any) -> Check:
        got = env.config.get(f"audit.{owner}")
        return Check(got == expected, f"audit.{owner} = {got!r}, expected {expected!r}")

    reads = tuple(
        StepSpec(
            f"read_{i}",
            f"read config {k}",
            "get_config",
            {"key": k},
            produces=f"v{i}",
            executor=f"reader-{i % 3}",
        )
        for i, k in enumerate(keys)
    )
    summary = ";".join(f"{{$v{i}}}" for i in range(len(keys)))
    write = StepSpec(
        "summary",
        "write the audit summary for {owner}",
        "set_config",
        {"key": "audit.{owner}", "value": summary},
        tuple(s.id for s in reads),
        executor="config-worker",
    )
    return Task(
        id=task_id,
        env=NAME,
        objective=f"Audit config keys {', '.join(keys)} and write the summary for {{owner}}",
        facts={"owner": owner},
        misread={"owner": "platform"},
        steps=(*reads, write),
        setup=setup,
        check=check,
        shape="wide",
    )


def scale_task(task_id: str, services: list[str], replicas: int) -> Task:
    """Fan-out: scale several services in parallel, check each, then log one line."""

    def check(env: Any) -> Check:
        wrong = [s for s in services if env.services[s]["replicas"] != replicas]
        if wrong:
            return Check(False, f"services not at {replicas} replicas: {wrong}")
        if env.config.get("scale-log") != [f"scaled {','.join(services)} to {replicas}"]:
            return Check(False, f"scale-log is {env.config.get('scale-log')}")
        return Check(True)

    steps: list[StepSpec] = []
    for s in services:
        steps.append(
            StepSpec(
                f"scale_{s}",
                f"scale {s} to {{replicas}} replicas",
                "scale_service",
                {"name": s, "replicas": "{replicas}"},
                produces=f"n_{s}",
                executor=f"scaler-{s}",
            )
        )
        steps.append(
            StepSpec(
                f"health_{s}",
                f"check {s} health",
                "check_health",
                {"name": s},
                (f"scale_{s}",),
                produces=f"h_{s}",
            )
        )
    steps.append(
        StepSpec(
            "log",
            "log the scaling",
            "append_config",
            {"key": "scale-log", "item": f"scaled {','.join(services)} to {{replicas}}"},
            tuple(f"health_{s}" for s in services),
            executor="config-worker",
        )
    )
    return Task(
        id=task_id,
        env=NAME,
        objective=f"Scale {', '.join(services)} to {{replicas}} replicas and log it",
        facts={"replicas": replicas},
        misread={"replicas": replicas * 10},
        steps=tuple(steps),
        setup=_noop,
        check=check,
        shape="fanout",
    )


def release_task(task_id: str, service: str, version: str, region: str, notes: list[str]) -> Task:
    """Two writers of one config key (serialised by an edge), then an irreversible deploy."""

    def check(env: Any) -> Check:
        if env.config.get("release-notes") != notes:
            return Check(False, f"release-notes {env.config.get('release-notes')} != {notes}")
        want = [{"service": service, "version": version, "region": region}]
        return Check(env.deployments == want, f"deployments {env.deployments}")

    return Task(
        id=task_id,
        env=NAME,
        objective="Add the release notes for {service} {version}, then deploy it to {region}",
        facts={"service": service, "version": version, "region": region},
        misread={"version": ARTIFACTS[service][0], "region": "us-east-1"},
        steps=(
            StepSpec(
                "versions",
                "list {service} artifacts",
                "list_artifacts",
                {"service": "{service}"},
                produces="versions",
            ),
            StepSpec(
                "note_a",
                "add the first release note",
                "append_config",
                {"key": "release-notes", "item": notes[0]},
                executor="writer-a",
            ),
            StepSpec(
                "note_b",
                "add the second release note",
                "append_config",
                {"key": "release-notes", "item": notes[1]},
                ("note_a",),
                executor="writer-b",
            ),
            StepSpec(
                "deploy",
                "deploy {service} {version} to {region}",
                "deploy",
                {"service": "{service}", "version": "{version}", "region": "{region}"},
                ("versions", "note_b"),
                executor="deployer",
            ),
        ),
        setup=_noop,
        check=check,
        shape="diamond",
    )


def migrate_task(task_id: str, old: str, new: str, owner: str) -> Task:
    """A chain that carries a produced value: copy a config key, mark the old one moved."""

    def setup(env: Any) -> None:
        env.config[old] = f"secret-for-{old}"

    def check(env: Any) -> Check:
        if env.config.get(new) != f"secret-for-{old}":
            return Check(False, f"{new} = {env.config.get(new)!r}")
        if env.config.get(old) != f"moved to {new} by {owner}":
            return Check(False, f"{old} = {env.config.get(old)!r}")
        return Check(True)

    return Task(
        id=task_id,
        env=NAME,
        objective=f"Move config key {old} to {new} and mark it moved by {{owner}}",
        facts={"owner": owner},
        misread={"owner": "root"},
        steps=(
            StepSpec("read_old", f"read {old}", "get_config", {"key": old}, produces="secret"),
            StepSpec(
                "write_new",
                f"copy the value to {new}",
                "set_config",
                {"key": new, "value": "{$secret}"},
                ("read_old",),
            ),
            StepSpec(
                "verify",
                f"read {new} back",
                "get_config",
                {"key": new},
                ("write_new",),
                produces="copied",
            ),
            StepSpec(
                "mark_old",
                f"mark {old} as moved by {{owner}}",
                "set_config",
                {"key": old, "value": f"moved to {new} by {{owner}}"},
                ("verify",),
                executor="config-worker",
            ),
        ),
        setup=setup,
        check=check,
        shape="chain",
    )


TASKS: tuple[Task, ...] = (
    deploy_task("ops-deploy-api", "api", "1.5.1", "eu-west-1", "1.5.0"),
    deploy_task("ops-deploy-billing", "billing", "2.1.0", "eu-central-1", "2.0.1"),
    deploy_task("ops-deploy-search", "search", "1.0.0", "ap-south-1", "0.9.7"),
    audit_task("ops-audit-small", ["db.pool", "db.timeout", "cache.ttl"], "sre"),
    audit_task(
        "ops-audit-wide",
        ["db.pool", "db.timeout", "cache.ttl", "cdn.ttl", "queue.size", "rate.limit"],
        "security",
    ),
    scale_task("ops-scale-pair", ["api", "auth"], 5),
    scale_task("ops-scale-fleet", ["api", "billing", "search", "notify"], 6),
    release_task(
        "ops-release-api", "api", "1.5.0", "eu-west-1", ["fix: retry storms", "feat: bulk export"]
    ),
    release_task(
        "ops-release-auth", "auth", "3.3.0", "us-west-2", ["fix: token refresh", "chore: bump deps"]
    ),
    migrate_task("ops-migrate-db-secret", "db.password", "vault.db.password", "alice"),
    migrate_task("ops-migrate-api-key", "api.key", "vault.api.key", "bob"),
)
