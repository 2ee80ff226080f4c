"""What the trust of a release costs: journalled atomic writes, the paired folder switch,
signing, and a strict verify.

Cases (one JSON line each, best of ``--repeat``; ``seconds`` wall, ``cpu_seconds`` of this
process):

* ``atomic_write`` -- ``n`` files of 1 kB through :func:`sdckit.io.atomic.atomic_write_bytes`
  (token name, journal, fsync, rename); baseline: the same files written to a temporary name,
  fsynced and renamed, without a journal.
* ``release_write`` -- a release of ``n`` records (RemoveVariables + PRAM) written and signed
  by :meth:`sdckit.release.ReleaseRun.write` over an earlier one (``overwrite``), the pair
  switched under one journal; baseline: the released data alone written with ``to_csv``.
* ``verify`` / ``verify_key`` -- :func:`sdckit.report.verify.verify_release` on that release,
  without and with the steward's key; baseline: the SHA-256 of every file of the folder.
* ``sign`` -- :func:`sdckit.report.signing.sign_certificate` of its certificate; baseline:
  its canonical bytes and their SHA-256.

Run from the project root: ``.venv/bin/python benchmarks/bench_release_trust.py [--quick] [--n N]``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from _common import emit, parse_args, peak_mb


def clock(fn, repeat):
    best_wall, best_cpu, out = float("inf"), float("inf"), None
    for _ in range(max(1, repeat)):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        best_wall, best_cpu = min(best_wall, time.perf_counter() - w), min(best_cpu, time.process_time() - c)
    return best_wall, best_cpu, out


def plain_write(folder: Path, n: int, data: bytes) -> None:
    for i in range(n):
        tmp = folder / f".plain{i}.tmp"
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, folder / f"plain{i}.bin")


def main() -> None:
    import numpy as np
    import pandas as pd

    from sdckit.io import read_microdata
    from sdckit.io.atomic import atomic_write_bytes
    from sdckit.masking.remove import RemoveVariables
    from sdckit.pram.steps import Pram
    from sdckit.release import Release
    from sdckit.report.signing import canonical_bytes, generate_keypair, load_private_key, sign_certificate
    from sdckit.report.verify import verify_release

    args = parse_args(__doc__.splitlines()[0])
    sizes = [args.n] if args.n else ([2_000] if args.quick else [2_000, 100_000])
    n_files = 50 if args.quick else 200
    work = Path(tempfile.mkdtemp(prefix="sdckit-bench-trust-"))
    try:
        data = b"x" * 1024
        folder = work / "files"
        folder.mkdir()
        wall, cpu, _ = clock(lambda: [atomic_write_bytes(folder / f"f{i}.bin", data) for i in range(n_files)],
                             args.repeat)
        base, _, _ = clock(lambda: plain_write(folder, n_files, data), args.repeat)
        emit(case="atomic_write", n=n_files, seconds=wall, cpu_seconds=cpu, baseline_seconds=base,
             peak_mb=peak_mb(lambda: atomic_write_bytes(folder / "peak.bin", data)),
             leftovers=sorted(p.name for p in folder.iterdir() if p.name.startswith(".sdckit")))
        key, pub = generate_keypair(work, "steward")
        signing_key = load_private_key(key)
        for n in sizes:
            rng = np.random.default_rng(1)
            frame = pd.DataFrame({"Person ID": np.arange(n), "region": rng.integers(1, 9, n),
                                  "sex": rng.integers(1, 3, n), "job": rng.integers(1, 6, n),
                                  "income": rng.lognormal(10, 1, n)})
            src = work / f"persons{n}.csv"
            frame.to_csv(src, index=False)
            md = read_microdata(src, key_vars=["region", "sex", "job"])
            run = Release(md, [RemoveVariables(["Person ID"]), Pram(["job"], min_diagonal=0.8)],
                          {"k_anonymity": 2, "allow_identifiers": ["income"]}, rng=5).run()
            out = work / f"rel{n}"
            run.write(out, signing_key=signing_key)  # the release every repeat replaces
            wall, cpu, _ = clock(lambda: run.write(out, overwrite=True, signing_key=signing_key), args.repeat)
            base, _, _ = clock(lambda: run.released.frame.to_csv(work / "plain.csv", index=False), args.repeat)
            emit(case="release_write", n=n, seconds=wall, cpu_seconds=cpu, baseline_seconds=base,
                 peak_mb=peak_mb(lambda: run.write(out, overwrite=True, signing_key=signing_key)),
                 files=len(list(out.iterdir())),
                 leftovers=sorted(p.name for p in work.iterdir() if p.name.startswith(".")))

            def hash_all():
                return [hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.rglob("*")) if p.is_file()]

            base, _, _ = clock(hash_all, args.repeat)
            for case, kw in (("verify", {}), ("verify_key", {"key": pub})):
                wall, cpu, res = clock(lambda: verify_release(out, **kw), args.repeat)
                emit(case=case, n=n, seconds=wall, cpu_seconds=cpu, baseline_seconds=base,
                     peak_mb=peak_mb(lambda: verify_release(out, **kw)), ok=res.ok,
                     checks=len(res.checks), authenticity_checked=res.authenticity["checked"])
            cert = json.loads((out / "certificate.json").read_text())
            wall, cpu, _ = clock(lambda: sign_certificate(cert, signing_key), args.repeat)
            base, _, _ = clock(lambda: hashlib.sha256(canonical_bytes(cert)).hexdigest(), args.repeat)
            emit(case="sign", n=n, seconds=wall, cpu_seconds=cpu, baseline_seconds=base,
                 peak_mb=peak_mb(lambda: sign_certificate(cert, signing_key)),
                 certificate_bytes=len(canonical_bytes(cert)))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
