"""The :mod:`.pydantic_ai` agent with a typed planner (``output_type=Plan``): its plan arrives
as the ``final_result`` output tool's arguments, not as answer text."""

from .pydantic_ai import run_typed as run

__all__ = ["run"]
