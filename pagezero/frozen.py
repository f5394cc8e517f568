"""Read-only values: mappings and sequences that a Result or ResultSet holds cannot be
changed after creation, and turn back into plain dicts and lists for JSON."""

from types import MappingProxyType

__all__ = ["frozen", "deep_frozen", "thawed"]


def frozen(mapping):
    """A read-only copy of one mapping (its values as they are)."""
    return MappingProxyType(dict(mapping))


def deep_frozen(value):
    """Nested dicts and lists as read-only mappings and tuples."""
    if isinstance(value, (dict, MappingProxyType)):
        return MappingProxyType({k: deep_frozen(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(deep_frozen(v) for v in value)
    return value


def thawed(value):
    """deep_frozen's inverse, for JSON."""
    if isinstance(value, MappingProxyType):
        return {k: thawed(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thawed(v) for v in value]
    return value
