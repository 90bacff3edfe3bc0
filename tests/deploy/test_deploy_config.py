"""Compose and Kubernetes files: schema-level checks and consistency with the code (fast, no
docker or cluster needed)."""

from __future__ import annotations

import argparse
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from planscope._cli import build_parser
from planscope_collector import CollectorSettings
from planscope_collector.storage import EXPORTER_TRACE_COLUMNS, TRACE_COLUMNS, load_migrations
from planscope_collector.storage._schema import TRACES_TABLE

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
K8S = DEPLOY / "k8s"
SOURCE_DIRS = ("sdk", "collector", "analyzer", "dashboard")


def _load_all(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _k8s_docs() -> list[dict[str, Any]]:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    docs: list[dict[str, Any]] = []
    for name in kustomization["resources"]:
        docs += _load_all(K8S / name)
    return docs


def _by_kind(kind: str) -> list[dict[str, Any]]:
    return [d for d in _k8s_docs() if d["kind"] == kind]


def _find(kind: str, name: str) -> dict[str, Any]:
    return next(d for d in _by_kind(kind) if d["metadata"]["name"] == name)


def _subcommand(name: str) -> argparse.ArgumentParser:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


def _flags(name: str) -> dict[str, argparse.Action]:
    return {opt: a for a in _subcommand(name)._actions for opt in a.option_strings}


def _check_args(args: list[str]) -> None:
    """Every flag of a `planscope <command> ...` line exists in that command's parser, and the
    whole line parses."""
    command, rest = args[0], args[1:]
    flags = _flags(command)
    for token in rest:
        if token.startswith("--"):
            assert token in flags, f"planscope {command} has no {token}"
    _subcommand(command).parse_args(rest)


def _source_text() -> str:
    return "\n".join(
        p.read_text(errors="replace") for d in SOURCE_DIRS for p in (REPO / d).rglob("*.py")
    )


def _planscope_containers() -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    for kind in ("StatefulSet", "Deployment"):
        for workload in _by_kind(kind):
            spec = workload["spec"]["template"]["spec"]
            for c in spec.get("initContainers", []) + spec["containers"]:
                if c["image"].startswith("planscope:"):
                    yield workload, c


# -- compose ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())


def test_compose_has_the_four_services_with_health_and_limits(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == {"clickhouse", "collector", "dashboard", "otel-collector"}
    for name in ("clickhouse", "collector", "dashboard"):
        assert services[name]["healthcheck"]["test"], name
    for name, service in services.items():
        assert service["deploy"]["resources"]["limits"]["memory"], name
        assert service.get("restart") == "unless-stopped", name
        assert "image" in service, name
    assert services["collector"]["depends_on"]["clickhouse"]["condition"] == "service_healthy"
    assert services["otel-collector"]["depends_on"]["collector"]["condition"] == "service_healthy"
    # persistent volumes for the store and the spool
    volumes = {v.split(":")[0] for s in services.values() for v in s.get("volumes", [])}
    assert (
        {"clickhouse-data", "collector-spool"}
        <= volumes
        <= set(compose["volumes"])
        | {
            "./clickhouse/users-compose.xml",
            "./otel-collector.yaml",
        }
    )
    for path in ("./clickhouse/users-compose.xml", "./otel-collector.yaml"):
        assert (DEPLOY / path).is_file()
    secret = compose["secrets"]["planscope_keys"]["file"]
    assert (DEPLOY / re.sub(r"\$\{[^:]+:-(.*)\}", r"\1", secret)).is_file()


def test_compose_commands_flags_and_ports_match_the_cli(compose: dict[str, Any]) -> None:
    services = compose["services"]
    collector, dashboard = services["collector"]["command"], services["dashboard"]["command"]
    _check_args(collector)
    _check_args(dashboard)
    assert collector[0] == "serve" and dashboard[0] == "dashboard"
    # serve's flags default to None (the settings' environment variables apply): the
    # settings hold the ports it listens on
    serve_port = CollectorSettings.model_fields["port"].default
    dash_port = _flags("dashboard")["--port"].default
    assert (serve_port, dash_port) == (4318, 8501)
    assert collector[collector.index("--port") + 1] == str(serve_port)
    assert dashboard[dashboard.index("--port") + 1] == str(dash_port)
    assert f"{serve_port}:{serve_port}" in services["collector"]["ports"]
    grpc_port = CollectorSettings.model_fields["grpc_port"].default
    assert f"{grpc_port}:{grpc_port}" in services["collector"]["ports"]
    assert f"{dash_port}:{dash_port}" in services["dashboard"]["ports"]
    assert "8123:8123" in services["clickhouse"]["ports"]
    assert dashboard[dashboard.index("--collector") + 1] == f"http://collector:{serve_port}"
    url = services["collector"]["environment"]["PLANSCOPE_CLICKHOUSE_URL"]
    assert re.fullmatch(r"http://planscope:\$\{[^}]+\}@clickhouse:8123/planscope", url)
    db = services["clickhouse"]["environment"]["CLICKHOUSE_DB"]
    assert url.endswith("/" + db)


def test_compose_env_vars_exist_in_the_code(compose: dict[str, Any]) -> None:
    source = _source_text()
    for name in ("collector", "dashboard"):
        for var in compose["services"][name].get("environment", {}):
            assert f'"{var}"' in source, f"{var} is read nowhere in the code"


def test_dockerfile_installs_the_server_and_dashboard_extras() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    assert "'.[server,dashboard]'" in text
    assert 'ENTRYPOINT ["planscope"]' in text
    assert "EXPOSE 4317 4318 8501" in text
    cmd = re.search(r"^CMD (\[.*\])$", text, re.MULTILINE)
    assert cmd is not None
    _check_args(yaml.safe_load(cmd.group(1)))


# -- the OpenTelemetry Collector writes planscope's table ------------------------------------------


def test_otel_collector_writes_the_same_table_without_owning_the_schema(
    compose: dict[str, Any],
) -> None:
    config = yaml.safe_load((DEPLOY / "otel-collector.yaml").read_text())
    exporter = config["exporters"]["clickhouse"]
    assert exporter["create_schema"] is False
    assert exporter["traces_table_name"] == TRACES_TABLE
    db = compose["services"]["clickhouse"]["environment"]["CLICKHOUSE_DB"]
    assert exporter["database"] == db
    assert (
        exporter["username"] == compose["services"]["clickhouse"]["environment"]["CLICKHOUSE_USER"]
    )
    assert exporter["endpoint"].startswith("tcp://clickhouse:9000")
    pipeline = config["service"]["pipelines"]["traces"]
    assert pipeline["exporters"] == ["clickhouse"] and "otlp" in pipeline["receivers"]
    assert set(pipeline["processors"]) <= set(config["processors"])


def test_exporter_columns_exist_in_otel_traces_and_project_has_a_default() -> None:
    """The exporter INSERTs its own column list; every one must be a column of otel_traces with
    the exporter's type, and planscope's extra Project must have a default."""
    sql = next(m.sql for m in load_migrations() if m.name == "0001_otel_traces")
    body = sql.split("CREATE TABLE IF NOT EXISTS {db}.otel_traces {on_cluster} (", 1)[1]
    body = body.split(") ENGINE", 1)[0]
    columns = dict(re.findall(r"^    (\w+) (\w+)", body, re.MULTILINE))
    nested = dict(re.findall(r"^        (\w+) (\w+)", body, re.MULTILINE))
    expected_types = {
        "Timestamp": "DateTime64", "TraceId": "String", "SpanId": "String",
        "ParentSpanId": "String", "TraceState": "String", "SpanName": "LowCardinality",
        "SpanKind": "LowCardinality", "ServiceName": "LowCardinality", "ResourceAttributes": "Map",
        "ScopeName": "String", "ScopeVersion": "String", "SpanAttributes": "Map",
        "Duration": "UInt64", "StatusCode": "LowCardinality", "StatusMessage": "String",
    }  # fmt: skip
    for column in EXPORTER_TRACE_COLUMNS:
        if "." in column:
            parent, child = column.split(".")
            assert columns.get(parent) == "Nested" and child in nested, column
        else:
            assert columns.get(column) == expected_types[column], column
    assert TRACE_COLUMNS[-1] == "Project" and "Project" not in EXPORTER_TRACE_COLUMNS
    assert re.search(r"^    Project LowCardinality\(String\) DEFAULT 'default'", body, re.M)


# -- kubernetes ------------------------------------------------------------------------------------


def test_k8s_documents_are_well_formed() -> None:
    docs = _k8s_docs()
    assert docs
    for doc in docs:
        assert {"apiVersion", "kind", "metadata"} <= set(doc), doc
        if doc["kind"] != "Namespace":
            assert doc["metadata"]["namespace"] == "planscope", doc["metadata"]["name"]
    kinds = {d["kind"] for d in docs}
    assert {"StatefulSet", "Deployment", "Service", "Secret", "ConfigMap"} <= kinds


def test_every_workload_has_probes_resources_and_matching_labels() -> None:
    for kind in ("StatefulSet", "Deployment"):
        for workload in _by_kind(kind):
            spec = workload["spec"]
            labels = spec["template"]["metadata"]["labels"]
            assert spec["selector"]["matchLabels"].items() <= labels.items()
            pod = spec["template"]["spec"]
            for c in pod["containers"]:
                name = f"{workload['metadata']['name']}/{c['name']}"
                assert c["livenessProbe"] and c["readinessProbe"], name
                for part in ("requests", "limits"):
                    assert {"cpu", "memory"} <= set(c["resources"][part]), name
            for c in pod.get("initContainers", []):
                assert c["resources"]["limits"], c["name"]


def test_statefulsets_have_volumes_and_governing_services() -> None:
    headless = {s["metadata"]["name"]: s for s in _by_kind("Service")}
    for sts in _by_kind("StatefulSet"):
        spec = sts["spec"]
        service = headless[spec["serviceName"]]
        assert service["spec"]["clusterIP"] == "None"
        assert service["spec"]["selector"].items() <= spec["template"]["metadata"]["labels"].items()
        claims = {t["metadata"]["name"] for t in spec["volumeClaimTemplates"]}
        mounts = {
            m["name"] for c in spec["template"]["spec"]["containers"] for m in c["volumeMounts"]
        }
        assert claims <= mounts, sts["metadata"]["name"]
        for claim in spec["volumeClaimTemplates"]:
            assert claim["spec"]["resources"]["requests"]["storage"]


def test_services_select_pods_and_target_declared_ports() -> None:
    pods = [
        (w["spec"]["template"]["metadata"]["labels"], w["spec"]["template"]["spec"]["containers"])
        for kind in ("StatefulSet", "Deployment")
        for w in _by_kind(kind)
    ]
    for service in _by_kind("Service"):
        selector = service["spec"]["selector"]
        matches = [cs for labels, cs in pods if selector.items() <= labels.items()]
        assert matches, service["metadata"]["name"]
        declared = {p.get("name") for cs in matches for c in cs for p in c.get("ports", [])} | {
            p["containerPort"] for cs in matches for c in cs for p in c.get("ports", [])
        }
        for port in service["spec"]["ports"]:
            assert port.get("targetPort", port["port"]) in declared, service["metadata"]["name"]


def test_secret_and_configmap_references_resolve() -> None:
    secrets = {s["metadata"]["name"]: s for s in _by_kind("Secret")}
    configmaps = {c["metadata"]["name"]: c for c in _by_kind("ConfigMap")}
    for kind in ("StatefulSet", "Deployment"):
        for workload in _by_kind(kind):
            pod = workload["spec"]["template"]["spec"]
            for volume in pod.get("volumes", []):
                if "secret" in volume:
                    assert volume["secret"]["secretName"] in secrets
                if "configMap" in volume:
                    assert volume["configMap"]["name"] in configmaps
            for c in pod.get("initContainers", []) + pod["containers"]:
                for env in c.get("env", []):
                    ref = env.get("valueFrom", {}).get("secretKeyRef")
                    if ref:
                        assert ref["key"] in secrets[ref["name"]]["stringData"], ref
                for mount in c.get("volumeMounts", []):
                    if "subPath" in mount:
                        volume = next(v for v in pod["volumes"] if v["name"] == mount["name"])
                        assert mount["subPath"] in configmaps[volume["configMap"]["name"]]["data"]


def test_planscope_containers_use_real_flags_ports_and_env_vars() -> None:
    source = _source_text()
    seen = set()
    for _workload, container in _planscope_containers():
        args = container["args"]
        _check_args(args)
        seen.add(args[0])
        for env in container.get("env", []):
            assert f'"{env["name"]}"' in source, env["name"]
        if args[0] in ("serve", "dashboard"):
            port = int(args[args.index("--port") + 1])
            default = _flags(args[0])["--port"].default  # serve: None, the settings' port
            assert port == (default or CollectorSettings.model_fields["port"].default)
            assert port in {p["containerPort"] for p in container["ports"]}
            assert args[args.index("--host") + 1] == "0.0.0.0"
    assert seen == {"serve", "migrate", "dashboard"}
    collector = _find("StatefulSet", "planscope-collector")["spec"]["template"]["spec"]
    main = collector["containers"][0]
    assert main["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert main["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert "/var/lib/planscope" in {m["mountPath"] for m in main["volumeMounts"]}
    keys = main["args"][main["args"].index("--keys-file") + 1]
    assert any(keys.startswith(m["mountPath"]) for m in main["volumeMounts"] if m.get("readOnly"))


def test_clickhouse_cluster_config_matches_the_statefulsets_and_migrate() -> None:
    config = _find("ConfigMap", "clickhouse-config")["data"]["cluster.xml"]
    root = ET.fromstring(config)
    clusters = root.find("remote_servers")
    assert clusters is not None and len(clusters) == 1
    cluster = clusters[0]
    migrate = next(c for _, c in _planscope_containers() if c["args"][0] == "migrate")
    assert migrate["args"][migrate["args"].index("--cluster") + 1] == cluster.tag
    shards = cluster.findall("shard")
    shard_sets = sorted(
        (
            s
            for s in _by_kind("StatefulSet")
            if s["metadata"]["name"].startswith("clickhouse-shard")
        ),
        key=lambda s: s["metadata"]["name"],
    )
    assert len(shards) == len(shard_sets) >= 2
    for index, (shard, sts) in enumerate(zip(shards, shard_sets, strict=True)):
        assert shard.findtext("internal_replication") == "true"
        hosts = [r.findtext("host") for r in shard.findall("replica")]
        name, service = sts["metadata"]["name"], sts["spec"]["serviceName"]
        assert hosts == [
            f"{name}-{r}.{service}.planscope.svc.cluster.local"
            for r in range(sts["spec"]["replicas"])
        ]
        env = {e["name"]: e for e in sts["spec"]["template"]["spec"]["containers"][0]["env"]}
        assert env["CLICKHOUSE_SHARD"]["value"] == str(index)
        assert env["CLICKHOUSE_REPLICA"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    keeper = _find("StatefulSet", "clickhouse-keeper")
    nodes = [n.findtext("host") for n in root.iter("node")]
    assert len(nodes) == keeper["spec"]["replicas"] == 3
    users = ET.fromstring(_find("ConfigMap", "clickhouse-config")["data"]["users.xml"])
    assert users.findtext("profiles/planscope/distributed_foreground_insert") == "1"
    url = _find("Secret", "planscope-clickhouse")["stringData"]["url"]
    assert re.fullmatch(
        r"http://planscope:[^@]+@clickhouse\.planscope\.svc\.cluster\.local:8123/\w+", url
    )
