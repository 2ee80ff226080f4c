"""Progress events: what listeners receive, context-local subscription, nothing on stdout."""

import contextvars
import subprocess
import sys
import threading

from sdckit.progress import ProgressEvents, bars_enabled, task


def test_events_of_a_task_in_order():
    seen = []
    with ProgressEvents(seen.append):
        with task("work", total=3) as t:
            for _ in range(3):
                t.advance()
    assert [(e.kind, e.done, e.total) for e in seen] == [
        ("start", 0, 3), ("advance", 1, 3), ("advance", 2, 3), ("advance", 3, 3), ("finish", 3, 3)]
    assert seen[-2].eta == 0.0 and seen[0].eta is None


def test_listeners_are_context_local():
    a, b = [], []

    def job(sink, n):
        with ProgressEvents(sink.append):
            with task(f"job{n}", total=n) as t:
                for _ in range(n):
                    t.advance()

    threads = [threading.Thread(target=contextvars.copy_context().run, args=(job, a, 2)),
               threading.Thread(target=contextvars.copy_context().run, args=(job, b, 4))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert {e.name for e in a} == {"job2"} and {e.name for e in b} == {"job4"}
    with task("nobody listens", total=1) as t:
        t.advance()
    assert len(a) == 4 and len(b) == 6


def test_a_broken_listener_does_not_stop_the_work():
    def boom(event):
        raise RuntimeError("listener failed")

    with ProgressEvents(boom), task("x", total=1) as t:
        t.advance()
    assert t.done == 1


def test_no_bars_when_stderr_is_not_a_tty():
    assert bars_enabled() is False  # pytest captures stderr
    with ProgressEvents(lambda e: None, bars=True):
        assert bars_enabled() is True


def test_release_and_sweep_send_events():
    from pathlib import Path

    from sdckit.explore.sweep import Candidate, Sweep
    from sdckit.release import Release
    from tests.report.demo_release import demo_spec

    spec, _ = demo_spec(Path("unused"))
    seen = []
    with ProgressEvents(seen.append):
        run = Release.from_spec(spec).run()
        Sweep(run.original, [Candidate("local_suppression", {"k": [2, 3]})], risk="global_risk",
              pre_steps=spec.steps[:1], seeds=[1], n_jobs=1, progress=False).run()
    release = [e for e in seen if e.name == "release steps"]
    assert [e.done for e in release if e.kind == "advance"] == list(range(1, len(spec.steps) + 1))
    sweep = [e for e in seen if e.name == "explore sweep"]
    assert sweep[0].total == 2 and sweep[-1].kind == "finish" and sweep[-1].done == 2


def test_json_output_stays_one_document_on_stdout(tmp_path):
    import pandas as pd

    pd.DataFrame({"a": [1, 1, 2, 2], "b": [1, 1, 2, 2]}).to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "s.toml").write_text('[input]\npath = "d.csv"\n[roles]\nkey_vars = ["a", "b"]\n'
                                     '[gate]\nk_anonymity = 2\n[output]\ndirectory = "out"\n')
    r = subprocess.run([sys.executable, "-m", "sdckit", "protect", str(tmp_path / "s.toml"), "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    import json

    json.loads(r.stdout)  # exactly one JSON document
    assert r.stderr == ""  # not a terminal: no bar
