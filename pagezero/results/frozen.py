"""Read-only values: mappings and sequences that a Result or ResultSet holds cannot be
changed after creation, and turn back into plain dicts and lists for JSON."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, TypeVar

__all__ = ["frozen", "deep_frozen", "thawed"]

_V = TypeVar("_V")


def frozen(mapping: Mapping[str, _V]) -> MappingProxyType[str, _V]:
    """A read-only copy of one mapping (its values as they are).

    Parameters
    ----------
    mapping : Mapping
        The mapping to copy; its values are kept as they are, not frozen.

    Returns
    -------
    types.MappingProxyType
        A read-only view of a private copy of `mapping`.
    """
    return MappingProxyType(dict(mapping))


def deep_frozen(value: Any) -> Any:
    """Nested dicts and lists as read-only mappings and tuples.

    Parameters
    ----------
    value : object
        A JSON-like value: dicts (or read-only mappings), lists and tuples
        nest; anything else is a leaf.

    Returns
    -------
    object
        `value` with every dict made a :class:`types.MappingProxyType` and every
        list a tuple, at every depth; leaves as they are.
    """
    if isinstance(value, (dict, MappingProxyType)):
        return MappingProxyType({k: deep_frozen(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(deep_frozen(v) for v in value)
    return value


def thawed(value: Any) -> Any:
    """deep_frozen's inverse, for JSON.

    Parameters
    ----------
    value : object
        A value as :func:`deep_frozen` returns it.

    Returns
    -------
    object
        `value` with every read-only mapping a dict and every tuple a list, at
        every depth; leaves as they are.
    """
    if isinstance(value, MappingProxyType):
        return {k: thawed(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thawed(v) for v in value]
    return value
