"""Whether rows fit a table's schema, checked in Python without building Arrow arrays.

Converting one document's chunk rows to Arrow costs some 200 microseconds whatever their
number (a fixed cost per column), more than chunking a small document. The pipeline
therefore checks each document's rows with :func:`check_rows`, which refuses exactly what
``pyarrow.RecordBatch.from_pylist`` would refuse for the types the tables use, so a bad
value still fails only its own document; the writer then converts many documents' rows in
one call. The checks are derived from the schema, and a schema with a type they do not
know fails at import.

Example:
    >>> from beam_chunking.schema import DOCUMENTS_SCHEMA
    >>> check_rows([{"document_id": "d", "status": "ok"}], DOCUMENTS_SCHEMA)
    >>> check_rows([{"document_id": "d", "status": None}], DOCUMENTS_SCHEMA)
    Traceback (most recent call last):
    ...
    beam_chunking.errors.ChunkingError: column 'status' may not be null (row 0)
"""
from __future__ import annotations

import numbers
from typing import Any, Callable, Dict, List, Mapping, Optional

import pyarrow as pa

from beam_chunking.errors import ChunkingError

Check = Callable[[Any], Optional[str]]  # a reason the value does not fit, or None


def _text(value: Any) -> Optional[str]:
    if not isinstance(value, str):
        return f"expected a string, got {type(value).__name__}"
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"not valid UTF-8 text ({exc.reason} at position {exc.start})"
    return None


def _integer(bits: int) -> Check:
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1

    def check(value: Any) -> Optional[str]:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):  # numpy's too
            return f"expected an integer, got {type(value).__name__}"
        if not lo <= int(value) <= hi:
            return f"{value} does not fit a {bits}-bit integer"
        return None

    return check


def _number(mantissa_bits: int) -> Check:
    # Arrow refuses an integer that the float type cannot hold exactly (2**24 + 1 in float32).
    exact = 2 ** (mantissa_bits + 1)

    def check(value: Any) -> Optional[str]:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return f"expected a number, got {type(value).__name__}"
        if isinstance(value, numbers.Integral) and abs(int(value)) > exact:
            return f"the integer {value} has no exact {mantissa_bits + 1}-bit-mantissa float"
        return None

    return check


def _boolean(value: Any) -> Optional[str]:
    return None if isinstance(value, bool) else f"expected a bool, got {type(value).__name__}"


def _nullable(check: Check) -> Check:
    return lambda value: None if value is None else check(value)


def _list_of(item: Check) -> Check:
    def check(value: Any) -> Optional[str]:
        if not isinstance(value, (list, tuple)):
            return f"expected a list, got {type(value).__name__}"
        for x in value:
            why = item(x)
            if why:
                return why
        return None

    return check


def _struct_of(fields: Dict[str, Check]) -> Check:
    def check(value: Any) -> Optional[str]:
        if not isinstance(value, Mapping):
            return f"expected a mapping, got {type(value).__name__}"
        for name, item in fields.items():
            why = item(value.get(name))
            if why:
                return f"{name}: {why}"
        return None

    return check


def _map_of(key: Check, item: Check) -> Check:
    def check(value: Any) -> Optional[str]:
        pairs = value.items() if isinstance(value, Mapping) else value
        if not isinstance(pairs, (list, tuple)) and not isinstance(value, Mapping):
            return f"expected a list of pairs, got {type(value).__name__}"
        for pair in pairs:
            if not isinstance(pair, tuple) or len(pair) != 2:
                return "expected (key, value) pairs"
            why = key(pair[0]) or item(pair[1])
            if why:
                return why
        return None

    return check


def checker(kind: pa.DataType, nullable: bool = True) -> Check:
    """The check of one Arrow type (strings, 32/64-bit integers, floats, bools, lists, structs
    and maps of those); ``nullable`` lets ``None`` through at the top level.

    Raises:
        TypeError: a type the checks do not cover (a schema changed without them).
    """
    if pa.types.is_string(kind):
        check = _text
    elif pa.types.is_int32(kind):
        check = _integer(32)
    elif pa.types.is_int64(kind):
        check = _integer(64)
    elif pa.types.is_floating(kind):
        check = _number(23 if pa.types.is_float32(kind) else 10 if pa.types.is_float16(kind) else 52)
    elif pa.types.is_boolean(kind):
        check = _boolean
    elif pa.types.is_map(kind):
        check = _map_of(checker(kind.key_type, nullable=False), checker(kind.item_type))
    elif pa.types.is_list(kind):
        check = _list_of(checker(kind.value_type, nullable=kind.value_field.nullable))
    elif pa.types.is_struct(kind):
        check = _struct_of({f.name: checker(f.type, f.nullable) for f in kind})
    else:
        raise TypeError(f"no row check for Arrow type {kind}")
    return _nullable(check) if nullable else check


_CHECKS: Dict[int, List] = {}


def _checks(schema: pa.Schema) -> List:
    found = _CHECKS.get(id(schema))
    if found is None or found[0] is not schema:
        found = [schema, [(f.name, f.nullable, checker(f.type, nullable=False)) for f in schema]]
        _CHECKS[id(schema)] = found  # one entry per schema object: the handful of tables
    return found[1]


def check_rows(rows: List[Mapping[str, Any]], schema: pa.Schema) -> None:
    """Raise :class:`ChunkingError` naming the column and row of the first value of ``rows``
    that does not fit ``schema``; a missing key is a null.

    Raises:
        ChunkingError: a value of the wrong type, a null in a non-nullable column, an integer
            out of its column's range, or a string that is not valid UTF-8 (a lone surrogate).
    """
    checks = _checks(schema)
    seen: List[Any] = [None] * len(checks)  # the last value checked per column
    for n, row in enumerate(rows):
        for k, (name, nullable, check) in enumerate(checks):
            value = row.get(name)
            if value is None:
                if not nullable:
                    raise ChunkingError(f"column {name!r} may not be null (row {n})")
                continue
            if value is seen[k]:  # a document's uri, strategy ... are one object in every row
                continue
            why = check(value)
            if why:
                raise ChunkingError(f"column {name!r}: {why} (row {n})")
            seen[k] = value
