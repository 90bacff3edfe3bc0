"""The Groovy scanner the Jenkinsfile and Nextflow plan readers share (``_groovy``): the edges
where the two readers' own copies disagreed, each read as Groovy reads it, by both readers.

Before the readers shared it, the Nextflow reader kept escapes as written, read ``null`` as the
word, quoted keys and a map literal as positional arguments, and a comment in or after a call
as part of it, and took a ``/* } */`` or a ``(`` in a comment for a bracket; the Jenkinsfile
reader read ``'a' + 'b'`` as one string, a ``'''`` string with its extra quotes, dropped the
arguments after a comment, and raised on a ``'''`` string over several lines."""

from __future__ import annotations

from typing import Any

import pytest
from planscope_collector import _groovy, _jenkinsfile, _nextflow


def _jenkins_args(call: str) -> dict[str, Any]:
    """The arguments the Jenkinsfile reader reads from a stage's one call."""
    text = f"pipeline {{\n  stages {{\n    stage('a') {{\n      steps {{\n        {call}\n"
    (step,) = _jenkinsfile.steps(text + "      }\n    }\n  }\n}")
    return step.args


def _nextflow_args(call: str) -> dict[str, Any]:
    """The arguments the Nextflow reader reads from a workflow block's one call."""
    (step,) = _nextflow.steps(f"workflow {{\n  a = F{call}\n}}")
    return step.args


# (the call's arguments, what both readers read)
EDGES = [
    # escaped quotes: the string's value, the quote and the backslash unescaped
    (r"(x: 'it\'s', y: 2)", {"x": "it's", "y": 2}),
    (r"(x: 'C:\\dir', y: 2)", {"x": "C:\\dir", "y": 2}),
    (r'(x: "say \"hi\"", y: 2)', {"x": 'say "hi"', "y": 2}),
    # a comma inside a string; a trailing comma
    ("(x: 'a, b', y: 2,)", {"x": "a, b", "y": 2}),
    # a GString's ${...} kept as written, quotes and braces inside it too
    ('(x: "${m["k"]}", y: "${ \'}\' }")', {"x": '${m["k"]}', "y": "${ '}' }"}),
    # ''' and """ strings: their text
    ("(x: '''tri''', y: \"\"\"ple\"\"\")", {"x": "tri", "y": "ple"}),
    ("(x: '''multi\nline''', y: 2)", {"x": "multi\nline", "y": 2}),
    # an expression of strings is no string: as written
    ("(x: 'a' + 'b', y: 2)", {"x": "'a' + 'b'", "y": 2}),
    # comments between the arguments and after the call are no arguments
    ("(x: 1, /* not y */ y: 2)", {"x": 1, "y": 2}),
    ("(x: 1, // the count\n          y: 2)", {"x": 1, "y": 2}),
    ("(x: 1, y: 2) // done /* } */", {"x": 1, "y": 2}),
    # null, a quoted key, a sole map literal (Groovy's named arguments)
    ("(x: null, 'k-1': 2)", {"x": None, "k-1": 2}),
    ("([x: 1, y: 'b'])", {"x": 1, "y": "b"}),
]


@pytest.mark.parametrize(("call", "want"), EDGES)
def test_both_readers_read_a_calls_arguments_as_groovy_does(call: str, want: Any) -> None:
    assert _jenkins_args(f"f{call}") == want
    assert _nextflow_args(call) == want


def test_a_nextflow_workflows_comments_are_no_code() -> None:
    # a brace in a block comment closes nothing; a parenthesis in a goal opens nothing
    read = _nextflow.steps(
        "workflow {\n  /* } */\n  // step (1: fetch\n  a = F(x: 1)\n  b = G(y: a.out)\n}"
    )
    assert [(s.name, s.goal, s.needs) for s in read] == [
        ("a", "step (1: fetch", ()),
        ("b", "", ("a",)),
    ]


def test_a_nextflow_params_literal_is_read_as_groovy_does() -> None:
    text = "params.g = 'it\\'s'\nparams.n = null\nworkflow {\n  a = F(g: params.g, n: params.n)\n}"
    (step,) = _nextflow.steps(text)
    assert step.args == {"g": "it's", "n": None}


def test_a_string_left_open_is_no_groovy_for_either_reader() -> None:
    # a one-quote string never spans lines in Groovy: the text is no workflow (the Nextflow
    # reader read the call above it before), no pipeline (as the Jenkinsfile reader had it)
    assert _nextflow.steps("workflow {\n  a = F(x: 1)\n  note: don't stop\n}") == []
    stage = "pipeline {\n stages {\n  stage('a') { steps {\n f(x: 1)\n note: don't stop\n"
    assert _jenkinsfile.steps(stage + " } }\n }\n}") == []


def test_a_jenkinsfile_string_over_lines_is_one_argument() -> None:
    # it raised (an unterminated string, from outside the reader's guard) before
    text = "pipeline {\n stages {\n  stage('a') { steps { sh '''\n make\n''' } }\n }\n}"
    assert [(s.name, s.tool, s.args) for s in _jenkinsfile.steps(text)] == [("a", "sh", {})]


def test_the_scanners_pieces() -> None:
    assert _groovy.split("a: '1, 2', b: [3, 4] /* , */, c: f(5, 6),") == [
        "a: '1, 2'",
        "b: [3, 4]",
        "c: f(5, 6)",
    ]
    assert _groovy.block("x { a { '}' } // }\n} y", 2) == " a { '}' } // }\n"
    assert _groovy.arguments("[1, 2], k: v") == [(None, "[1, 2]"), ("k", "v")]
    with pytest.raises(_groovy.Unreadable):
        _groovy.block("x { '} }", 2)
    with pytest.raises(_groovy.Unreadable):
        _groovy.block("x { /* } }", 2)
