"""Where a webhook may go: public addresses only, unless the operator allows more.

A rule's URL is chosen by whoever holds an ``admin`` key, and the collector usually sits inside
a network with metadata services (169.254.169.254), databases and admin ports on loopback. So
a target is checked when the rule is saved *and* at each delivery: the host is resolved, every
address must be public (not loopback, link-local, private, unique-local, unspecified,
multicast or reserved, also when written as an IPv4-mapped IPv6 address, in decimal, octal or
hex), and the request is sent to the very address that was checked (the ``Host`` header and
TLS server name stay the URL's), so a DNS answer that changes between the check and the
connection (DNS rebinding) changes nothing.

An operator who runs receivers on internal addresses lists them in
``PLANSCOPE_ALERTS_ALLOW_TARGETS``: comma-separated networks (``10.0.0.0/8``, ``127.0.0.1``)
or host names (``hooks.internal``), matched against the resolved address or the URL's host.

>>> check_target("http://169.254.169.254/latest/meta-data", AllowList())  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
planscope_analyzer.alerts._errors.DeliveryError: webhook target 169.254.169.254 is a link-local...
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from ._errors import DeliveryError

__all__ = ["AllowList", "Target", "check_target"]

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Sequence[str]]

FORBIDDEN_HEADERS = frozenset(
    {
        # hop-by-hop (RFC 9110 7.6.1) and framing: httpx sets these itself
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
        # the target is the URL's host, nothing else
        "host",
    }
)
"""Header names a rule may not set (``x-planscope-*`` are the collector's own, too)."""


def header_problem(name: str) -> str | None:
    """Why a rule may not set header ``name``, or None.

    >>> header_problem("Host"), header_problem("X-Team")
    ('Host is set from the URL', None)
    """
    lower = name.strip().lower()
    if lower == "host":
        return "Host is set from the URL"
    if lower in FORBIDDEN_HEADERS:
        return f"{name} is a hop-by-hop or framing header"
    if lower.startswith("x-planscope-"):
        return f"{name} is set by planscope (event id, signature)"
    return None


@dataclass(frozen=True)
class AllowList:
    """Networks and host names the operator allows besides public addresses."""

    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()
    hosts: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, text: str) -> AllowList:
        """``"127.0.0.1, 10.0.0.0/8, hooks.internal"``; raises ``ValueError`` on a bad network.

        >>> AllowList.parse("127.0.0.1,hooks.internal").allows("hooks.internal", "10.1.1.1")
        True
        """
        networks = []
        hosts = set()
        for item in (i.strip() for i in text.split(",")):
            if not item:
                continue
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                if "/" in item or not item.replace("-", "").replace(".", "").isalnum():
                    raise ValueError(f"not a network or host name: {item!r}") from None
                hosts.add(item.lower().rstrip("."))
        return cls(tuple(networks), frozenset(hosts))

    def allows(self, host: str, address: str) -> bool:
        if host.lower().rstrip(".") in self.hosts:
            return True
        ip = _unmapped(ipaddress.ip_address(address))
        return any(ip.version == n.version and ip in n for n in self.networks)


@dataclass(frozen=True)
class Target:
    """A checked target: the URL to connect to (host replaced by the checked address) and the
    original host for the ``Host`` header and TLS server name."""

    url: str
    host: str
    address: str
    auth: tuple[str, str] | None = None
    """The URL's ``user:password``, sent as basic auth (the pinned URL has none)."""


def _unmapped(ip: IpAddress) -> IpAddress:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def _kind(ip: IpAddress) -> str | None:
    """Why ``ip`` is not public, or None when it is."""
    ip = _unmapped(ip)
    for name, flag in (
        ("an unspecified", ip.is_unspecified),
        ("a loopback", ip.is_loopback),
        ("a link-local", ip.is_link_local),
        ("a multicast", ip.is_multicast),
        ("a private", ip.is_private),
        ("a reserved", ip.is_reserved),
    ):
        if flag:
            return name
    if not ip.is_global:
        return "a non-global"
    return None


def _resolve(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, ValueError) as exc:
        raise DeliveryError(f"webhook host {host!r} does not resolve: {exc}") from None
    return sorted({str(info[4][0]) for info in infos})


def check_target(url: str, allow: AllowList, resolve: Resolver | None = None) -> Target:
    """Resolve ``url``'s host and check every address; raises ``DeliveryError`` saying why not."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise DeliveryError(f"webhook URL must be http(s), not {parts.scheme or '(none)'!r}")
    host = parts.hostname
    if not host:
        raise DeliveryError("webhook URL has no host")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise DeliveryError("webhook URL has an invalid port") from None
    addresses = (resolve or _resolve)(host, port)
    if not addresses:
        raise DeliveryError(f"webhook host {host!r} does not resolve")
    for address in addresses:
        kind = _kind(ipaddress.ip_address(address))
        if kind is not None and not allow.allows(host, address):
            shown = host if host == address else f"{host} ({address})"
            raise DeliveryError(
                f"webhook target {shown} is {kind} address; only public addresses are allowed "
                "(an operator may allow more with PLANSCOPE_ALERTS_ALLOW_TARGETS)"
            )
    address = addresses[0]
    literal = f"[{address}]" if ":" in address else address
    netloc = f"{literal}:{port}"
    pinned = parts._replace(netloc=netloc).geturl()
    auth = (parts.username or "", parts.password or "") if parts.username is not None else None
    return Target(pinned, host, address, auth)
