"""The steward's Ed25519 key pair and the certificate's signature (sdckit.report.signing)."""

from __future__ import annotations

import base64
import hashlib
import json
import stat

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdckit.errors import InputError
from sdckit.report.signing import (
    PASSPHRASE_ENV,
    SignatureError,
    canonical_bytes,
    fingerprint,
    generate_keypair,
    load_private_key,
    load_public_key,
    sign_certificate,
    verify_signature,
)


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    d = tmp_path_factory.mktemp("keys")
    priv, pub = generate_keypair(d, "steward")
    other_priv, other_pub = generate_keypair(d, "intruder")
    return {"priv": priv, "pub": pub, "other_priv": other_priv, "other_pub": other_pub}


CERT = {"format": "sdckit-certificate/2", "kind": "public", "run_id": "0" * 32, "files": [
    {"name": "released.csv", "role": "data", "sha256": "a" * 64, "bytes": 10}], "gate": [], "note": "Zürich ✓"}


def test_keygen_writes_a_private_pem_readable_by_its_owner_only_and_a_public_pem(keys):
    priv, pub = keys["priv"], keys["pub"]
    assert stat.S_IMODE(priv.stat().st_mode) == 0o600
    assert priv.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert pub.read_bytes().startswith(b"-----BEGIN PUBLIC KEY-----")
    # the fingerprint by hand: SHA-256 of the 32 raw bytes of the public key
    from cryptography.hazmat.primitives import serialization

    raw = load_public_key(pub).public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    assert len(raw) == 32
    assert fingerprint(load_public_key(pub)) == "ed25519:" + hashlib.sha256(raw).hexdigest()
    assert fingerprint(load_private_key(priv)) == fingerprint(load_public_key(pub))


def test_a_signature_checks_with_the_raw_key_over_the_documented_canonical_bytes(keys):
    signed = sign_certificate(CERT, load_private_key(keys["priv"]))
    assert verify_signature(signed, load_public_key(keys["pub"])) == fingerprint(load_public_key(keys["pub"]))
    # independently: compact sorted JSON of the certificate without signature.value, UTF-8
    body = {k: v for k, v in signed.items()}
    body["signature"] = {k: v for k, v in signed["signature"].items() if k != "value"}
    message = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    assert message == canonical_bytes(signed)
    load_public_key(keys["pub"]).verify(base64.b64decode(signed["signature"]["value"]), message)
    assert CERT.get("signature") is None  # the input is not changed


def test_a_changed_certificate_another_key_and_no_signature_fail_in_one_line(keys):
    pub = load_public_key(keys["pub"])
    signed = sign_certificate(CERT, load_private_key(keys["priv"]))
    edited = json.loads(json.dumps(signed))
    edited["files"][0]["sha256"] = "b" * 64
    with pytest.raises(SignatureError, match="the certificate was changed after the key"):
        verify_signature(edited, pub)
    by_other = sign_certificate(CERT, load_private_key(keys["other_priv"]))
    with pytest.raises(SignatureError, match="signed by the key ed25519:[0-9a-f]{64}, not by the given key"):
        verify_signature(by_other, pub)
    forged = dict(by_other, signature=dict(by_other["signature"], key_fingerprint=signed["signature"]["key_fingerprint"]))
    with pytest.raises(SignatureError, match="does not match its content"):
        verify_signature(forged, pub)  # the steward's fingerprint written over another key's signature
    with pytest.raises(SignatureError, match="is not signed"):
        verify_signature(dict(CERT, signature=None), pub)
    for bad in ({"algorithm": "rsa"}, "x", {"algorithm": "ed25519", "key_fingerprint": signed["signature"]
                                            ["key_fingerprint"], "value": "***"}):
        with pytest.raises(SignatureError) as err:
            verify_signature(dict(signed, signature=bad), pub)
        assert "\n" not in str(err.value) and err.value.exit_code == 5


json_values = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=8)
                           | st.floats(allow_nan=False, allow_infinity=False),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                      max_size=3), max_leaves=8)


@given(cert=st.dictionaries(st.text(max_size=6), json_values, min_size=1, max_size=5),
       key=st.text(max_size=6), value=json_values)
def test_any_certificate_verifies_signed_and_fails_when_one_field_changes(keys, cert, key, value):
    priv, pub = load_private_key(keys["priv"]), load_public_key(keys["pub"])
    cert = {k: v for k, v in cert.items() if k != "signature"}
    signed = sign_certificate(cert, priv)
    verify_signature(json.loads(json.dumps(signed)), pub)  # as read back from the file
    changed = dict(signed)
    changed[key if key != "signature" else "x"] = value
    same = json.dumps(changed, sort_keys=True) == json.dumps(signed, sort_keys=True)
    if same:
        verify_signature(changed, pub)
    else:
        with pytest.raises(SignatureError):
            verify_signature(changed, pub)


def test_a_passphrase_protects_the_private_key(tmp_path, monkeypatch):
    monkeypatch.setenv(PASSPHRASE_ENV, "correct horse battery staple")
    priv, pub = generate_keypair(tmp_path, "guarded")
    assert b"ENCRYPTED PRIVATE KEY" in priv.read_bytes()
    assert fingerprint(load_private_key(priv)) == fingerprint(load_public_key(pub))
    monkeypatch.delenv(PASSPHRASE_ENV)
    with pytest.raises(InputError, match=f"protected by a passphrase; set the environment variable {PASSPHRASE_ENV}"):
        load_private_key(priv)
    monkeypatch.setenv(PASSPHRASE_ENV, "wrong")
    with pytest.raises(InputError, match="does not open this private key"):
        load_private_key(priv)


def test_keygen_never_replaces_a_key_nor_writes_into_a_release_folder(tmp_path, keys):
    priv, pub = generate_keypair(tmp_path, "steward")
    text = priv.read_bytes()
    with pytest.raises(InputError, match="already exists; sdckit keygen never replaces a key"):
        generate_keypair(tmp_path, "steward")
    assert priv.read_bytes() == text
    release = tmp_path / "rel"
    (release / "sub").mkdir(parents=True)
    (release / ".sdckit-release").write_text("{}")
    for folder in (release, release / "sub"):
        with pytest.raises(InputError, match="a private key is never written into a release folder"):
            generate_keypair(folder, "k")
    assert sorted(p.name for p in release.rglob("*")) == [".sdckit-release", "sub"]
    for name in ("../up", "", "a/b", ".hidden"):
        with pytest.raises(InputError, match="must be a plain file name"):
            generate_keypair(tmp_path, name)


def test_wrong_key_files_are_named_in_one_line(tmp_path, keys):
    garbage = tmp_path / "garbage.key"
    garbage.write_bytes(b"not a key\n")
    cases = [(load_private_key, keys["pub"], "is a public key; signing needs the private key"),
             (load_public_key, keys["priv"], "is a private key; verify needs the public key"),
             (load_private_key, garbage, "is not a PEM private key"),
             (load_public_key, garbage, "is not a PEM public key"),
             (load_public_key, tmp_path / "nope.pub", "no such public key file")]
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    other = tmp_path / "ec.key"
    other.write_bytes(ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    cases.append((load_private_key, other, "not Ed25519"))
    for fn, path, fragment in cases:
        with pytest.raises(InputError) as err:
            fn(path)
        assert fragment in str(err.value) and "\n" not in str(err.value)


def test_keygen_command(tmp_path, monkeypatch, capsys):
    from sdckit.cli import main

    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["keygen", "steward", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["fingerprint"] == fingerprint(load_public_key(tmp_path / "steward.pub"))
    assert doc["passphrase_protected"] is False
    assert main(["keygen", "steward"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "already exists" in err and len(err.strip().splitlines()) == 1
