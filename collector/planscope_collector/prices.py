"""Prices for LLM calls whose spans carry no cost, from the maintained ``genai-prices`` table.

The span model (migration 0011) stores each LLM call's provider, model and token usage; a call
whose span has no cost of its own (``planscope.llm.cost_usd``, ``llm.cost.total``,
``operation.cost``) is priced at query time by ``planscope_llm_costs`` from
``planscope_model_prices``: one row per (provider, model) seen, filled here. Prices are looked
up once per model name, off the ingest path (the analyzer calls :func:`price_new_models` before
each pass), so ingest never waits for it, and a call stored before its model was priced is
priced as soon as it is. A model the library does not know is recorded with ``Known = 0`` and
costs 0 (not looked up again until the library is upgraded).

Tiered prices (long-context surcharges) are priced at the first tier: the table holds one rate
per token kind.

>>> rates("openai", "gpt-4o-mini").input_per_mtok > 0
True
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib.metadata import version
from typing import Any, Protocol

__all__ = ["ModelRates", "price_new_models", "rates"]

log = logging.getLogger("planscope.prices")

PRICES_TABLE = "planscope_model_prices"
PRICE_COLUMNS = (
    "Provider",
    "Model",
    "Known",
    "InputPerMTok",
    "OutputPerMTok",
    "CacheReadPerMTok",
    "CacheWritePerMTok",
    "PricedBy",
    "UpdatedAt",
)
_MTOK = 1_000_000

# (provider, model) of LLM calls in the lookback window with no cost of their own and no row in
# the price table yet (or a row from another version of the library).
UNPRICED_MODELS = f"""
SELECT DISTINCT toString(Provider) AS provider, toString(Model) AS model
FROM planscope_llm_calls
WHERE Start >= now64(9) - toIntervalSecond({{lookback:UInt32}})
  AND Model != '' AND CostSource = ''
  AND (toString(Provider), Model) NOT IN (
      SELECT toString(Provider), Model FROM {PRICES_TABLE} WHERE PricedBy = {{by:String}})
LIMIT 10000
"""


class _Store(Protocol):
    def query(self, sql: str, parameters: Any = None) -> list[dict[str, Any]]: ...

    def insert_rows(
        self, table: str, rows: Any, columns: Any, *, dedup_token: str | None = None
    ) -> None: ...


@dataclass(frozen=True)
class ModelRates:
    """USD per million tokens of each kind; ``known`` is False when no price was found."""

    known: bool
    input_per_mtok: float = 0.0
    output_per_mtok: float = 0.0
    cache_read_per_mtok: float = 0.0
    cache_write_per_mtok: float = 0.0


def _priced_by() -> str:
    return f"genai-prices {version('genai-prices')}"


def rates(provider: str, model: str) -> ModelRates:
    """The per-token rates of ``model`` (by ``provider`` when the library knows it).

    >>> rates("no-such-provider", "no-such-model").known
    False
    """
    try:
        from genai_prices import Usage, calc_price
    except ImportError as exc:  # pragma: no cover - the server extra installs it
        raise ImportError(
            "pricing LLM calls needs genai-prices: pip install 'planscope[server]'"
        ) from exc

    def price(**usage: int) -> float:
        try:
            calc = calc_price(Usage(**usage), model, provider_id=provider or None)
        except LookupError:
            calc = calc_price(Usage(**usage), model)  # provider unknown to the library
        return float(calc.total_price)

    try:
        base = price(input_tokens=_MTOK)
    except LookupError:
        return ModelRates(known=False)
    return ModelRates(
        known=True,
        input_per_mtok=base,
        output_per_mtok=price(output_tokens=_MTOK),
        cache_read_per_mtok=price(input_tokens=_MTOK, cache_read_tokens=_MTOK),
        cache_write_per_mtok=price(input_tokens=_MTOK, cache_write_tokens=_MTOK),
    )


def price_new_models(store: _Store, lookback_seconds: int = 7 * 86400) -> int:
    """Add a price row for every model of recent unpriced LLM calls; returns how many.

    >>> # price_new_models(open_store("chdb:///tmp/ps/store"))
    """
    by = _priced_by()
    rows = store.query(UNPRICED_MODELS, {"lookback": lookback_seconds, "by": by})
    if not rows:
        return 0
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    out = []
    for row in rows:
        r = rates(row["provider"], row["model"])
        out.append(
            (
                row["provider"],
                row["model"],
                int(r.known),
                r.input_per_mtok,
                r.output_per_mtok,
                r.cache_read_per_mtok,
                r.cache_write_per_mtok,
                by,
                now,
            )
        )
    store.insert_rows(PRICES_TABLE, out, PRICE_COLUMNS)
    log.info("priced %d model(s) (%d unknown to %s)", len(out), sum(1 for o in out if not o[2]), by)
    return len(out)
