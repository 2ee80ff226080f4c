"""Files written atomically get the permissions of an ordinary write (umask), not 0600."""

import os

from sdckit.io.atomic import atomic_write_text


def test_mode_follows_umask(tmp_path):
    old = os.umask(0o022)
    try:
        path = atomic_write_text(tmp_path / "x.txt", "hello")
    finally:
        os.umask(old)
    assert (path.stat().st_mode & 0o777) == 0o644
    assert path.read_text() == "hello"
