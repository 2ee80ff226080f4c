"""Signed certificates: the steward's Ed25519 key proves who released a folder.

A certificate is signed over its *canonical bytes*: the certificate as parsed from JSON, with
``signature.value`` left out (the algorithm and the key's fingerprint are signed with it),
written by :func:`canonical_bytes` as compact JSON with sorted keys, UTF-8, numbers as
Python's ``json`` writes them. The signature is embedded in ``certificate.json``::

    "signature": {"algorithm": "ed25519",
                  "key_fingerprint": "ed25519:<SHA-256 of the raw 32-byte public key, hex>",
                  "value": "<64-byte Ed25519 signature, base64>"}

An unsigned certificate has ``"signature": null``. Anyone may recompute the hashes of the
files against the certificate (integrity); only whoever holds the steward's public key can
tell that the certificate itself is the steward's (authenticity):
``sdckit verify DIR --key steward.pub``.

Keys are written by ``sdckit keygen NAME`` (:func:`generate_keypair`): ``NAME.key`` (PKCS#8
PEM, mode 0600, encrypted with the passphrase in the environment variable
``SDCKIT_KEY_PASSPHRASE`` when it is set) and ``NAME.pub`` (SubjectPublicKeyInfo PEM).

References
----------
Bernstein, D. J., Duif, N., Lange, T., Schwabe, P. and Yang, B.-Y. (2012). High-speed
high-security signatures. *Journal of Cryptographic Engineering* 2(2), 77-89 (Ed25519).
Josefsson, S. and Liusvaara, I. (2017). Edwards-Curve Digital Signature Algorithm (EdDSA).
RFC 8032, sec. 5.1.
"""

from __future__ import annotations

import base64
import binascii
import copy
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from ..errors import InputError, SDCError

__all__ = ["generate_keypair", "load_private_key", "load_public_key", "sign_certificate", "verify_signature",
           "fingerprint", "canonical_bytes", "SignatureError", "ALGORITHM", "PASSPHRASE_ENV"]

ALGORITHM = "ed25519"
#: the environment variable that holds the private key's passphrase (never a command-line option:
#: it would show in the process list and the shell's history)
PASSPHRASE_ENV = "SDCKIT_KEY_PASSPHRASE"
_FINGERPRINT_RE = re.compile(r"ed25519:[0-9a-f]{64}")


class SignatureError(SDCError):
    """A certificate's signature is missing, made by another key, or does not match (exit code 5)."""

    exit_code = 5


def _passphrase(passphrase: str | bytes | None) -> bytes | None:
    if passphrase is None:
        passphrase = os.environ.get(PASSPHRASE_ENV) or None
    if passphrase is None:
        return None
    return passphrase.encode("utf-8") if isinstance(passphrase, str) else bytes(passphrase)


def generate_keypair(folder: str | os.PathLike = ".", name: str = "steward", *,
                     passphrase: str | bytes | None = None) -> tuple[Path, Path]:
    """Write a new Ed25519 key pair: ``folder/name.key`` (private, mode 0600) and
    ``folder/name.pub`` (public). Returns both paths.

    The private key is encrypted with ``passphrase`` (default: the environment variable
    ``SDCKIT_KEY_PASSPHRASE``; none when it is unset). Existing files are never replaced, and a
    key is never written into a release folder.
    """
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from ..io.atomic import RELEASE_MARK, atomic_write_bytes

    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", name):
        raise InputError(f"keygen: the key name {name!r} must be a plain file name (letters, digits, '.', '_', '-'), "
                         "e.g. steward.")
    folder = Path(folder)
    probe = folder
    while True:
        if (probe / RELEASE_MARK).exists():
            raise InputError(f"{folder}: is inside the release folder {probe}; a private key is never written "
                             "into a release folder; choose a folder of your own.")
        if probe.resolve().parent == probe.resolve():
            break
        probe = probe.resolve().parent
    private, public = folder / f"{name}.key", folder / f"{name}.pub"
    for p in (private, public):
        if p.exists() or p.is_symlink():
            raise InputError(f"{p}: already exists; sdckit keygen never replaces a key: choose another name.")
    key = Ed25519PrivateKey.generate()
    secret = _passphrase(passphrase)
    enc = (serialization.BestAvailableEncryption(secret) if secret else serialization.NoEncryption())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, enc)
    pub = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    atomic_write_bytes(private, pem, mode=0o600, exclusive=True)
    try:
        atomic_write_bytes(public, pub, exclusive=True)
    except BaseException:
        private.unlink()  # written by this call a moment ago
        raise
    return private, public


def _read_key_file(path: str | os.PathLike, what: str) -> bytes:
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such {what} file; write a key pair with 'sdckit keygen NAME'.")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror}); check its permissions.") from None
    if len(data) > 64 * 1024:
        raise InputError(f"{path}: is not a key file ({len(data):,} bytes); give the {what} file that "
                         "'sdckit keygen' wrote.")
    return data


def load_private_key(path: str | os.PathLike, *, passphrase: str | bytes | None = None):
    """The steward's Ed25519 private key from a PEM file written by :func:`generate_keypair`.

    An encrypted key is opened with ``passphrase`` (default: ``SDCKIT_KEY_PASSPHRASE``).
    """
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    path = Path(path)
    data = _read_key_file(path, "private key")
    if b"PUBLIC KEY" in data and b"PRIVATE KEY" not in data:
        raise InputError(f"{path}: is a public key; signing needs the private key (the .key file of 'sdckit keygen').")
    secret = _passphrase(passphrase)
    encrypted = b"ENCRYPTED PRIVATE KEY" in data
    if encrypted and secret is None:
        raise InputError(f"{path}: the private key is protected by a passphrase; set the environment variable "
                         f"{PASSPHRASE_ENV} to it.")
    try:
        key = serialization.load_pem_private_key(data, password=secret if encrypted else None)
    except (ValueError, TypeError) as exc:
        if encrypted:
            raise InputError(f"{path}: the passphrase in {PASSPHRASE_ENV} does not open this private key.") from None
        raise InputError(f"{path}: is not a PEM private key ({str(exc).splitlines()[0] if str(exc) else 'unreadable'}); "
                         "give the .key file that 'sdckit keygen' wrote.") from None
    except Exception as exc:  # the library's own errors (e.g. an unsupported algorithm)
        raise InputError(f"{path}: is not a usable private key ({type(exc).__name__}); give the .key file "
                         "that 'sdckit keygen' wrote.") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise InputError(f"{path}: is a {type(key).__name__.replace('PrivateKey', '').replace('_', '')} key, "
                         "not Ed25519; write a key pair with 'sdckit keygen NAME'.")
    return key


def load_key_outside(key: Any, *folders: str | os.PathLike) -> Any:
    """The steward's private key, loaded from ``key`` (a file) after checking that it lies
    outside every output folder (it would be published or replaced with the folder); a key
    object or None is returned as it is.

    Raises
    ------
    InputError
        The key file is inside one of ``folders``.
    """
    if key is None or not isinstance(key, (str, os.PathLike)):
        return key
    path = Path(key)
    real = Path(os.path.abspath(path)).resolve()
    for d in folders:
        top = Path(os.path.abspath(d)).resolve()
        if real == top or top in real.parents:
            raise InputError(f"{path}: the signing key is inside the output folder {d}; a private key must never "
                             "be written into a release: keep it outside the output folders.")
    return load_private_key(path)


def load_public_key(path: str | os.PathLike):
    """The steward's Ed25519 public key from a PEM file (``NAME.pub`` of :func:`generate_keypair`)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    path = Path(path)
    data = _read_key_file(path, "public key")
    if b"PRIVATE KEY" in data:
        raise InputError(f"{path}: is a private key; verify needs the public key (the .pub file of 'sdckit keygen'), "
                         "and the private key should stay with the steward.")
    try:
        key = serialization.load_pem_public_key(data)
    except Exception:
        raise InputError(f"{path}: is not a PEM public key; give the .pub file that 'sdckit keygen' wrote.") from None
    if not isinstance(key, Ed25519PublicKey):
        raise InputError(f"{path}: is not an Ed25519 public key; give the .pub file that 'sdckit keygen' wrote.")
    return key


def fingerprint(key: Any) -> str:
    """``"ed25519:"`` and the hex SHA-256 of the raw 32-byte public key (of a public or a private key)."""
    from cryptography.hazmat.primitives import serialization

    public = key.public_key() if hasattr(key, "public_key") else key
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "ed25519:" + hashlib.sha256(raw).hexdigest()


def canonical_bytes(cert: dict) -> bytes:
    """The bytes a signature covers: the certificate without ``signature.value``, as compact
    JSON with sorted keys (UTF-8)."""
    body = dict(cert)
    sig = body.get("signature")
    if isinstance(sig, dict):
        body["signature"] = {k: v for k, v in sig.items() if k != "value"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def sign_certificate(cert: dict, key: Any) -> dict:
    """A copy of ``cert`` with its Ed25519 signature by the private ``key`` (see the module
    docstring). The certificate is taken as it reads back from JSON (tuples become lists)."""
    body = json.loads(json.dumps(cert))
    body["signature"] = {"algorithm": ALGORITHM, "key_fingerprint": fingerprint(key)}
    value = key.sign(canonical_bytes(body))
    body["signature"]["value"] = base64.b64encode(value).decode("ascii")
    return body


def verify_signature(cert: dict, public_key: Any) -> str:
    """Check the signature of a certificate (as parsed from ``certificate.json``) with the
    steward's public key. Returns the key's fingerprint.

    Raises
    ------
    SignatureError
        One line: the certificate is not signed, is signed by another key, or its signature
        does not match its content.
    """
    from cryptography.exceptions import InvalidSignature

    want = fingerprint(public_key)
    if not isinstance(cert, dict):
        raise SignatureError("certificate.json: is not a certificate object; it cannot carry a signature")
    sig = cert.get("signature")
    if sig is None:
        raise SignatureError(f"certificate.json: is not signed; the steward's key {want} was expected "
                             "(the release was written without a signing key)")
    if not isinstance(sig, dict) or sig.get("algorithm") != ALGORITHM or not isinstance(sig.get("value"), str) \
            or not isinstance(sig.get("key_fingerprint"), str):
        raise SignatureError("certificate.json: the signature field is malformed (it needs algorithm "
                             "'ed25519', key_fingerprint and value)")
    got = sig["key_fingerprint"]
    if got != want:
        shown = got if _FINGERPRINT_RE.fullmatch(got) else repr(got[:80])
        raise SignatureError(f"certificate.json: signed by the key {shown}, not by the given key {want}")
    try:
        value = base64.b64decode(sig["value"].encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise SignatureError("certificate.json: the signature value is not base64") from None
    try:
        public_key.verify(value, canonical_bytes(copy.deepcopy(cert)))
    except InvalidSignature:
        raise SignatureError(f"certificate.json: the signature does not match its content: the certificate "
                             f"was changed after the key {want} signed it") from None
    except (ValueError, TypeError):  # e.g. a value of the wrong length, or a value json cannot write
        raise SignatureError("certificate.json: the signature does not match its content") from None
    return want
