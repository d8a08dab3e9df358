"""Id validation: the first line of defence for "one pair never touches another's files".

Every user, character, card and session id passes through ``check_id`` before it is
joined into a path, so ``../x``, ``a/b`` or ``.git`` can never name a file.
"""

from __future__ import annotations

import re

from memfs.errors import InvalidIdError

ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def check_id(value: object, kind: str = "id") -> str:
    """Return ``value`` if it is a valid id, else raise ``InvalidIdError`` naming why."""
    if not isinstance(value, str):
        raise InvalidIdError(f"invalid {kind} {value!r}: must be a string")
    if value == "":
        raise InvalidIdError(f"invalid {kind}: empty")
    if len(value) > 64:
        raise InvalidIdError(f"invalid {kind} {value[:20]!r}...: longer than 64 characters")
    if ID_PATTERN.fullmatch(value) is None or value in {".", ".."}:
        raise InvalidIdError(
            f"invalid {kind} {value!r}: use letters, digits, '_', '.', '-' "
            "and start with a letter or digit"
        )
    return value
