"""The applications of an environment: groups of its tools, each driven by one application
agent (the host variant routes sub-tasks to them).

>>> [a.agent for a in applications("files", ["read_file", "write_file", "list_dir"])]
['explorer-agent', 'editor-agent']
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Application:
    """An application and the tools its agent may call."""

    name: str
    tools: tuple[str, ...]

    @property
    def agent(self) -> str:
        """The name of the application agent (the executor of the sub-tasks routed to it)."""
        return f"{self.name}-agent"


APPLICATIONS: dict[str, tuple[Application, ...]] = {
    "ops": (
        Application("config", ("get_config", "set_config", "append_config")),
        Application("services", ("get_service", "check_health", "scale_service")),
        Application("releases", ("list_artifacts", "deploy")),
    ),
    "support": (
        Application("crm", ("find_customer",)),
        Application("orders", ("get_order", "issue_refund")),
        Application("helpdesk", ("get_ticket", "update_ticket", "set_priority", "add_note")),
        Application("mail", ("send_email",)),
    ),
    "files": (
        Application("explorer", ("read_file", "list_dir", "move_file", "delete_file")),
        Application("editor", ("write_file", "append_file")),
    ),
}
"""The applications of the bundled environments (a config store, a service registry and a
release manager; a CRM, an order system, a helpdesk and a mailer; a file explorer and an
editor)."""


def applications(env: str, tools: Iterable[str]) -> tuple[Application, ...]:
    """The applications of environment ``env`` with these tools: the declared ones (tools the
    environment lacks dropped), plus one named after the environment for tools no declared
    application holds (every tool of an undeclared environment)."""
    available = list(tools)
    apps = [
        Application(a.name, tuple(t for t in a.tools if t in available))
        for a in APPLICATIONS.get(env, ())
    ]
    apps = [a for a in apps if a.tools]
    rest = tuple(t for t in available if not any(t in a.tools for a in apps))
    if rest:
        apps.append(Application(env, rest))
    return tuple(apps)


def application_of(apps: Iterable[Application], tool: str | None) -> Application | None:
    """The application whose agent has ``tool``."""
    return next((a for a in apps if tool in a.tools), None)
