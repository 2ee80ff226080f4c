"""No seed and no path of the steward's machine in any public output.

Runs the demo, a protect, a seedless protect, an explore and a table release with distinctive
seeds, then scans every public file (every file whose name does not say "internal", outside
the internal folders) for each seed in decimal and in hex, for the OS entropy drawn by the
seedless run, and for the absolute paths of the run's folders.
"""

from __future__ import annotations

import json
import pathlib
import shutil

from sdckit.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "src" / "sdckit" / "data"

RELEASE_SEED = 918273645123
EXPLORE_SEEDS = (736251983, 99182734)
TABLE_SEED = 55512345678


def public_files(folder: pathlib.Path):
    for p in sorted(folder.rglob("*")):
        if not p.is_file():
            continue
        rel = p.relative_to(folder)
        if any("internal" in part for part in rel.parts):
            continue
        yield p


def needles(seed: int | str) -> list[str]:
    s = int(seed)
    return [str(s), f"{s:x}", f"{s:X}", f"0x{s:x}"]


def scan(files, secrets: list[str], paths: list[str]) -> list[str]:
    found = []
    for f in files:
        text = f.read_bytes().decode("latin-1")
        for secret in secrets:
            if secret in text:
                found.append(f"{f.name}: seed {secret}")
        for path in paths:
            if path in text:
                found.append(f"{f.name}: path {path}")
    return found


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


def _spec(tmp_path: pathlib.Path, name: str, seed: int | None, out: str) -> pathlib.Path:
    run = f"[run]\nseed = {seed}\n" if seed is not None else ""
    path = tmp_path / f"{name}.toml"
    path.write_text(f'''[input]
path = "census.csv"
na_values = [-9]
[roles]
key_vars = ["Region", "Sex", "Age", "Marital Status"]
{run}
[[steps]]
method = "remove"
variables = ["Person ID"]
[[steps]]
method = "recode"
variable = "Age"
hierarchy_file = "hierarchy_age.csv"
level = 1
[[steps]]
method = "pram"
variables = ["Marital Status"]
min_diagonal = 0.8
[[steps]]
method = "local_suppression"
k = 3
[gate]
k_anonymity = 3
[output]
directory = "{out}"
data = "released.csv"
''')
    return path


def test_no_seed_and_no_machine_path_in_public_outputs(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(DATA / "uk_census2011_teaching_10k.csv", tmp_path / "census.csv")
    shutil.copy(DATA / "hierarchy_age.csv", tmp_path / "hierarchy_age.csv")
    secrets: list[str] = []
    public: list[pathlib.Path] = []

    # 1. the demo (its seed is read back from the internal report)
    assert main(["demo", "--output", str(tmp_path / "demo"), "--json"]) == 0
    capsys.readouterr()
    internal = json.loads((tmp_path / "demo-internal" / "internal_report.json").read_text())
    secrets += needles(internal["seeds"]["root"]["entropy"])
    public += list(public_files(tmp_path / "demo"))

    # 2. a protect with a distinctive seed, and 3. a seedless one (OS entropy, recorded internally)
    assert main(["protect", str(_spec(tmp_path, "seeded", RELEASE_SEED, "rel")), "--json"]) == 0
    capsys.readouterr()
    secrets += needles(RELEASE_SEED)
    public += list(public_files(tmp_path / "rel"))
    assert main(["protect", str(_spec(tmp_path, "seedless", None, "rel_os")), "--json"]) == 0
    capsys.readouterr()
    os_entropy = json.loads((tmp_path / "rel_os-internal" / "internal_report.json").read_text())
    assert os_entropy["seeds"]["root"]["source"] == "os"
    secrets += needles(os_entropy["seeds"]["root"]["entropy"])
    public += list(public_files(tmp_path / "rel_os"))

    # 4. an explore sweep with distinctive seeds
    spec = _spec(tmp_path, "explore", None, "explore_rel").read_text()
    spec = spec.replace('[gate]', f'''[explore]
risk = "linkage"
utility = "entropy"
threshold = 0.2
seeds = [{EXPLORE_SEEDS[0]}, {EXPLORE_SEEDS[1]}]
directory = "sweep"
[[candidates]]
method = "pram"
grid = {{ min_diagonal = [0.6, 0.9] }}
fixed = {{ variables = ["Sex"] }}
[gate]''')
    (tmp_path / "explore.toml").write_text(spec)
    assert main(["explore", str(tmp_path / "explore.toml"), "--json"]) == 0
    capsys.readouterr()
    for s in EXPLORE_SEEDS:
        secrets += needles(s)
    public += [p for p in public_files(tmp_path / "sweep") if not p.name.endswith(".toml")]

    # 5. a table release with a seed (Cox's unbiased rounding draws random numbers)
    for name in ("delinquent.csv",):
        shutil.copy(ROOT / "examples" / "tables" / name, tmp_path / name)
    (tmp_path / "table.toml").write_text(f'''[input]
table = "delinquent.csv"
value = "n"
[table]
dimensions = ["county", "education"]
[protection]
method = "rounding"
base = 5
rounding = "unbiased"
seed = {TABLE_SEED}
[output]
table = "tables/published.csv"
report = "tables/delinquent_internal_report.html"
''')
    assert main(["table", str(tmp_path / "table.toml"), "--json"]) == 0
    capsys.readouterr()
    secrets += needles(TABLE_SEED)
    public += list(public_files(tmp_path / "tables"))

    assert len(public) >= 15
    machine_paths = [str(tmp_path), str(ROOT), str(pathlib.Path.home()) + "/"]
    leaks = scan(public, secrets, [p for p in machine_paths if len(p) > 5])
    assert not leaks, leaks
