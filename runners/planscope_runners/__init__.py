"""planscope_runners: a reference planner-executor runtime instrumented with planscope.

Five variants on one core (Plan-and-Act, ADaPT, planning scripts, DAG with scoped replanning,
ReAct), two model kinds (OpenAI-compatible HTTP, deterministic scripted), three environments
with 31 tasks, and fault injection with ground-truth labels for measuring analyzers.

>>> import planscope_runners as pr
>>> pr.run_task("dag", "files", "files-merge-6").outcome
'success'
>>> suite = pr.run_suite(20, fault_rate=0.3, seed=1, labels_path="/tmp/labels.jsonl")
"""

from ._core import (
    DEFAULT_BUDGET,
    ApprovalGate,
    Approved,
    Counters,
    Decision,
    Edited,
    Rejected,
    RunOptions,
)
from ._env import Check, Environment, StepSpec, Task, Tool
from ._errors import (
    FaultNotApplicable,
    ModelError,
    PlanFormatError,
    RunnerError,
    ToolError,
    UnknownNameError,
)
from ._faults import FINDING_KINDS, KNOBS, ExpectedFinding, Fault, resolve_faults
from ._models import (
    ChatModel,
    ChatRequest,
    ChatResponse,
    Message,
    OpenAIChatModel,
    Price,
    ToolCall,
    ToolSchema,
    Usage,
)
from ._runner import RunResult, SuiteResult, load_labels, plan_suite, run_suite, run_task
from ._scripted import ScriptedModel
from .environments import TASKS, get_task, make_env, tasks_for
from .variants import VARIANTS, Variant

__all__ = [
    "DEFAULT_BUDGET",
    "FINDING_KINDS",
    "KNOBS",
    "TASKS",
    "VARIANTS",
    "ApprovalGate",
    "Approved",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "Check",
    "Counters",
    "Decision",
    "Edited",
    "Environment",
    "ExpectedFinding",
    "Fault",
    "FaultNotApplicable",
    "Message",
    "ModelError",
    "OpenAIChatModel",
    "PlanFormatError",
    "Price",
    "Rejected",
    "RunOptions",
    "RunResult",
    "RunnerError",
    "ScriptedModel",
    "StepSpec",
    "SuiteResult",
    "Task",
    "Tool",
    "ToolCall",
    "ToolError",
    "ToolSchema",
    "UnknownNameError",
    "Usage",
    "Variant",
    "get_task",
    "load_labels",
    "make_env",
    "plan_suite",
    "resolve_faults",
    "run_suite",
    "run_task",
    "tasks_for",
]
