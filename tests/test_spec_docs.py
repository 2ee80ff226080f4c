"""docs/release_spec.md is generated from the step declarations and must be current."""

import json
from pathlib import Path

from sdckit._spec_docs import package_steps, render_release_spec_doc, steps_document, steps_help_text
from sdckit.params import step_params
from sdckit.registry import known_gate_checks, known_steps, step_class

DOC = Path(__file__).resolve().parents[1] / "docs" / "release_spec.md"


def test_committed_release_spec_doc_is_current():
    assert DOC.read_text("utf-8") == render_release_spec_doc(), (
        "docs/release_spec.md is out of date: run "
        "`.venv/bin/python -m sdckit._spec_docs > docs/release_spec.md`")


def test_doc_lists_every_step_parameter_and_gate():
    text = render_release_spec_doc()
    for name in package_steps():
        assert f"### `{name}`" in text
        for p in step_params(step_class(name)):
            assert f"`{p.name}`" in text
    for gate in known_gate_checks():
        assert f"| `{gate}` |" in text
    for key in ("allow_identifiers", "keep_order", "max_linkage_all_columns"):
        assert key in text


def test_help_text_and_json_document_cover_every_step():
    help_text = steps_help_text()
    doc = json.loads(json.dumps(steps_document()))  # JSON-ready
    assert [s["name"] for s in doc["steps"]] == known_steps()
    for s in doc["steps"]:
        assert help_text.count(f"\n{s['name']}: ") == 1
        for p in s["params"]:
            assert f"  {'*' if p['advanced'] else ''}{p['name']} = " in help_text
    assert [g["name"] for g in doc["gates"]] == known_gate_checks()


def test_protect_help_and_steps_command_list_every_step(capsys, monkeypatch):
    from sdckit.cli import main
    monkeypatch.setenv("COLUMNS", "400")  # one help line per parameter
    monkeypatch.setenv("TERMINAL_WIDTH", "400")
    assert main(["protect", "--help"]) == 0
    out = capsys.readouterr().out
    for name in known_steps():
        assert f"{name}: " in out
        for p in step_params(step_class(name)):
            assert f" {'*' if p.advanced else ''}{p.name} = " in out
    assert main(["steps", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)  # exactly one JSON document on stdout
    assert [s["name"] for s in doc["steps"]] == known_steps()
