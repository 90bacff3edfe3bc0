"""Plans stated as an Apache Airflow DAG file.

A planner may write its plan the way data teams write a pipeline: an Airflow DAG file (Python
source) whose operators are the steps, ``var = PythonOperator(task_id='fetch',
python_callable=fetch_rows, op_kwargs={...})``, in a ``with DAG(...)`` block or beside a
``DAG(...)`` they name with ``dag=``. A step is the operator's ``task_id`` (what Airflow and the
app run it by), its tool the ``python_callable`` (else the operator's class: a
``BashOperator`` is its own tool), its arguments ``op_kwargs`` (and ``op_args`` by position;
for another operator, its keywords but the task's own settings), its goal ``doc_md`` / ``doc``.
An earlier task's output is a Jinja template, ``{{ ti.xcom_pull(task_ids='fetch')['rows'] }}``
(``task_instance`` alike): that task is a need; ``{{ params.x }}`` is the DAG's ``params``
literal when the file gives one (a value settled outside the tasks: no step). The order
``a >> b >> [c, d]`` (``<<``, ``chain(...)``, ``set_upstream`` / ``set_downstream``) adds needs.
The text is parsed with :mod:`ast` and **never executed**; the TaskFlow API (``@task``
functions) is not read. ``observed.evidence_plans`` offers every planner answer to
:func:`steps`.
"""

from __future__ import annotations

import ast
import re
from itertools import pairwise
from typing import Any

from ._calllist import dotted
from ._readstep import ReadStep, first_read

_FENCED = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
"""A fenced code block, Python or unlabelled (markdown chat answers fence their code)."""
_MAX_TEXT = 200_000
"""Longer answers are not parsed (a plan is never this long)."""
_XCOM = re.compile(
    r"\b(?:ti|task_instance)\.xcom_pull\(\s*(?:task_ids\s*=\s*)?"
    r"(\[[^\]]*\]|'[^']*'|\"[^\"]*\")"
)
"""A Jinja reference to an earlier task's output (its ``task_ids``: one id or a list)."""
_QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")
"""A quoted task id in a ``task_ids`` argument."""
_PARAM = re.compile(r"\{\{\s*params\.([A-Za-z_]\w*)\s*\}\}")
"""A Jinja reference to a DAG parameter."""
_SETTINGS = frozenset(
    {
        "task_id", "dag", "doc", "doc_md", "doc_rst", "doc_json", "doc_yaml", "retries",
        "retry_delay", "trigger_rule", "pool", "queue", "priority_weight", "owner",
        "depends_on_past", "execution_timeout", "params", "default_args", "python_callable",
        "op_args", "op_kwargs", "templates_dict", "provide_context", "email", "sla",
    }
)  # fmt: skip
"""An operator's keywords that configure the task, not its work: no arguments."""


def steps(text: str) -> list[ReadStep]:
    """The tasks of a text's Airflow DAG file (the whole text or its first fenced block that
    has one; it must build a ``DAG(...)``), in the file's order: each a step named by its
    ``task_id``, its tool the ``python_callable`` (else the operator's class), its arguments,
    its needs the tasks its templates pull from and those upstream of it, its goal ``doc_md``;
    [] when the text is no such file, has no task or two tasks share an id.

    >>> s = steps('''from airflow import DAG
    ... with DAG(dag_id="rows", params={"day": "2027-01-02"}) as dag:
    ...     fetch = PythonOperator(task_id="fetch", python_callable=fetch_rows,
    ...         op_kwargs={"day": "{{ params.day }}"}, doc_md="step 1: fetch the day's rows")
    ...     load = PythonOperator(task_id="load", python_callable=load_rows,
    ...         op_kwargs={"rows": "{{ ti.xcom_pull(task_ids='fetch')['rows'] }}"})
    ...     note = BashOperator(task_id="note", bash_command="echo done")
    ...     fetch >> load >> [note]
    ... ''')
    >>> [(x.name, x.tool, x.needs) for x in s][1:]
    [('load', 'load_rows', ('fetch',)), ('note', 'BashOperator', ('load',))]
    >>> s[0].args, s[0].goal, s[2].args
    ({'day': '2027-01-02'}, "step 1: fetch the day's rows", {'bash_command': 'echo done'})
    >>> steps("x = PythonOperator(task_id='a', python_callable=f)"), steps("DAG(")
    ([], [])
    """
    if len(text) > _MAX_TEXT or "DAG" not in text or "task_id" not in text:
        return []
    return first_read(text, _FENCED, _read)


def _read(code: str) -> list[ReadStep]:
    """:func:`steps` of one piece of code."""
    try:
        module = ast.parse(code.strip())
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    params: dict[str, Any] = {}
    dag = False
    tasks: dict[str, ast.Call] = {}  # task id -> its operator call, in the file's order
    var: dict[str, str] = {}  # the name a task is assigned to -> its task id
    orders: list[ast.expr] = []
    for node in ast.walk(module):
        if isinstance(node, ast.Call) and dotted(node.func) == "DAG":
            dag = True
            params.update(_params(node))
    for statement in _statements(module.body):
        value = statement.value if isinstance(statement, ast.Assign | ast.Expr) else None
        task = _task_id(value) if isinstance(value, ast.Call) else None
        if task is not None:
            if task in tasks:
                return []
            assert isinstance(value, ast.Call)
            tasks[task] = value
            if isinstance(statement, ast.Assign):
                for target in statement.targets:
                    if isinstance(target, ast.Name):
                        var[target.id] = task
        elif isinstance(statement, ast.Expr):
            orders.append(statement.value)
    if not dag or not tasks:
        return []
    upstream: dict[str, list[str]] = {t: [] for t in tasks}
    for order in orders:
        for before, after in _edges(order, var):
            if after in upstream and before in tasks and before not in upstream[after]:
                upstream[after].append(before)
    out: list[ReadStep] = []
    for task, call in tasks.items():
        keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
        callable_ = dotted(keywords["python_callable"]) if "python_callable" in keywords else ""
        args: dict[str, Any] = {}
        if callable_:
            op_args = _literal(keywords.get("op_args"))
            for i, value in enumerate(op_args if isinstance(op_args, list | tuple) else []):
                args[str(i)] = value
            op_kwargs = _literal(keywords.get("op_kwargs"))
            args.update(op_kwargs if isinstance(op_kwargs, dict) else {})
        else:
            args = {k: _literal(v) for k, v in keywords.items() if k not in _SETTINGS}
        args = {str(k): _filled(v, params) for k, v in args.items()}
        pulled = [t for t in _pulled(args) if t in tasks and t != task]
        goal = _literal(keywords.get("doc_md") or keywords.get("doc"))
        out.append(
            ReadStep(
                task,
                tuple(dict.fromkeys(pulled + upstream[task])),
                goal if isinstance(goal, str) else "",
                callable_ or dotted(call.func).rsplit(".", 1)[-1],
                args,
            )
        )
    return out


def _statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """A module's statements, those of its ``with`` blocks (``with DAG(...) as dag:``, task
    groups) in their place."""
    out: list[ast.stmt] = []
    for statement in body:
        if isinstance(statement, ast.With):
            out += _statements(statement.body)
        else:
            out.append(statement)
    return out


def _task_id(call: ast.Call) -> str | None:
    """The ``task_id`` an operator's call gives as a literal string, None for any other call."""
    for keyword in call.keywords:
        if keyword.arg == "task_id" and isinstance(keyword.value, ast.Constant):
            value = keyword.value.value
            return value if isinstance(value, str) and value else None
    return None


def _literal(node: ast.expr | None) -> Any:
    """A literal as its value, anything else as written (never evaluated); None for none."""
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return ast.unparse(node)


def _params(call: ast.Call) -> dict[str, Any]:
    """The ``params`` literal a ``DAG(...)`` call gives (a value per name), {} when none."""
    for keyword in call.keywords:
        if keyword.arg == "params":
            value = _literal(keyword.value)
            return value if isinstance(value, dict) else {}
    return {}


def _filled(value: Any, params: dict[str, Any]) -> Any:
    """An argument with its ``{{ params.x }}`` templates filled from the DAG's ``params``: the
    parameter's value when the template is the whole argument, its text inside a longer one."""
    if not isinstance(value, str):
        return value
    whole = _PARAM.fullmatch(value.strip())
    if whole and whole.group(1) in params:
        return params[whole.group(1)]
    return _PARAM.sub(lambda m: str(params.get(m.group(1), m.group(0))), value)


def _pulled(args: dict[str, Any]) -> list[str]:
    """The task ids the arguments' ``xcom_pull`` templates pull from, in order."""
    out: list[str] = []
    for value in args.values():
        for m in _XCOM.finditer(value if isinstance(value, str) else str(value)):
            out += [a or b for a, b in _QUOTED.findall(m.group(1))]
    return list(dict.fromkeys(out))


def _edges(node: ast.expr, var: dict[str, str]) -> list[tuple[str, str]]:
    """The (upstream, downstream) task pairs an order statement sets: ``a >> b >> [c, d]``,
    ``a << b``, ``chain(a, b, [c, d])``, ``a.set_downstream(b)`` / ``b.set_upstream(a)``.
    A shift's value is its right operand (as Airflow's ``>>`` and ``<<`` return it), so
    ``a >> b >> c`` is ``a >> b`` then ``b >> c``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.RShift | ast.LShift):
        left, right = _value(node.left, var), _value(node.right, var)
        if isinstance(node.op, ast.LShift):
            left, right = right, left
        pairs = [(a, b) for a in left for b in right]
        return _edges(node.left, var) + _edges(node.right, var) + pairs
    if isinstance(node, ast.Call):
        func = node.func
        if dotted(func).rsplit(".", 1)[-1] == "chain":
            groups = [_value(a, var) for a in node.args]
            return [(a, b) for x, y in pairwise(groups) for a in x for b in y]
        if isinstance(func, ast.Attribute) and func.attr in ("set_downstream", "set_upstream"):
            mine = _value(func.value, var)
            others = [t for a in node.args for t in _value(a, var)]
            if func.attr == "set_upstream":
                return [(o, m) for o in others for m in mine]
            return [(m, o) for m in mine for o in others]
    return []


def _value(node: ast.expr, var: dict[str, str]) -> list[str]:
    """The tasks an operand of an order statement stands for: a task's name, a list of them,
    a shift's right operand."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.RShift | ast.LShift):
        return _value(node.right, var)
    if isinstance(node, ast.Name):
        return [var[node.id]] if node.id in var else []
    if isinstance(node, ast.List | ast.Tuple):
        return [t for e in node.elts for t in _value(e, var)]
    return []
