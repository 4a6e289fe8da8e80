"""A minimal writer of Outlook ``.msg`` files for the tests: MS-CFB container, MS-OXMSG content.

No library here writes ``.msg`` files, and a stored binary would hide what it holds, so the
tests build theirs with :func:`msg_bytes`. What it supports, and nothing more:

- the container (MS-CFB): version 3, 512-byte sectors, up to 109 FAT sectors (files up to
  about 6.8 MiB, so no DIFAT sectors), streams under 4,096 bytes in the mini stream (64-byte
  mini sectors), every directory entry black in a balanced binary tree of its siblings
  (MS-CFB allows an all-black tree; readers only search it);
- the message (MS-OXMSG): class ``IPM.Note``; subject, sender name and address, display To
  and Cc, plain body, HTML body, compressed RTF body, transport headers, Message-ID (Unicode string and binary
  properties, one ``__substg1.0_`` stream each); submit time and flags as fixed properties
  in ``__properties_version1.0``; the named-property storage with its three empty streams;
  one recipient storage per recipient; attachments by value (method 1: file name, MIME
  type, bytes) or embedded messages (method 5: a ``__substg1.0_3701000D`` storage holding a
  whole message, which may have attachments of its own).

Example:
    >>> data = msg_bytes(subject="Hi", body="Hello", attachments=[("a.txt", b"text", "text/plain")])
    >>> data[:8] == CFB_MAGIC
    True
"""
from __future__ import annotations

import datetime as dt
import struct
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple, Union

CFB_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
SECTOR, MINI_SECTOR, MINI_CUTOFF = 512, 64, 4096
FREESECT, ENDOFCHAIN, FATSECT, NOSTREAM = 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFD, 0xFFFFFFFF
STORAGE, STREAM, ROOT = 1, 2, 5
BLACK = 1

#: A storage: entry name -> stream bytes or a nested storage.
Tree = Dict[str, Union[bytes, "Tree"]]


@dataclass(frozen=True)
class Embedded:
    """An attached Outlook message (attach method 5).

    Args:
        name: The attachment's display name (readers add ``.msg``).
        fields: The inner message's :func:`msg_bytes` arguments. Default: all defaults.
    """

    name: str
    fields: Dict[str, object] = field(default_factory=dict)


def _sibling_tree(entries: List[dict], ids: List[int]) -> int:
    """Link ``ids`` (one storage's children) as a balanced search tree; return its root's id."""
    # MS-CFB orders siblings by name length first, then by upper-cased name.
    ids = sorted(ids, key=lambda i: (len(entries[i]["name"]), entries[i]["name"].upper()))

    def build(lo: int, hi: int) -> int:
        if lo >= hi:
            return NOSTREAM
        mid = (lo + hi) // 2
        entries[ids[mid]]["left"], entries[ids[mid]]["right"] = build(lo, mid), build(mid + 1, hi)
        return ids[mid]

    return build(0, len(ids))


def _chain(fat: List[int], start: int, count: int) -> None:
    for k in range(start, start + count):
        fat[k] = k + 1 if k + 1 < start + count else ENDOFCHAIN


def cfb_bytes(tree: Tree) -> bytes:
    """Write ``tree`` (the root storage's entries) as an MS-CFB version 3 compound file."""
    entries: List[dict] = []

    def add(name: str, node) -> int:
        if len(name) > 31:
            raise ValueError(f"CFB entry names are at most 31 characters: {name!r}")
        idx = len(entries)
        entries.append({"name": name, "node": node, "left": NOSTREAM, "right": NOSTREAM,
                        "child": NOSTREAM, "start": ENDOFCHAIN, "size": 0})
        if isinstance(node, dict):
            kids = [add(k, v) for k, v in node.items()]
            entries[idx]["child"] = _sibling_tree(entries, kids)
            entries[idx]["start"] = 0  # storages have no data
        return idx

    add("Root Entry", tree)
    mini, minifat, big = bytearray(), [], []
    for e in entries[1:]:
        data = e["node"]
        if isinstance(data, dict) or not data:
            continue
        e["size"] = len(data)
        if len(data) < MINI_CUTOFF:  # small streams live in the mini stream, in 64-byte mini sectors
            first, count = len(mini) // MINI_SECTOR, -(-len(data) // MINI_SECTOR)
            e["start"] = first
            minifat.extend(first + k + 1 if k + 1 < count else ENDOFCHAIN for k in range(count))
            mini += data + b"\0" * (count * MINI_SECTOR - len(data))
        else:
            big.append(e)
    n_dir = -(-len(entries) * 128 // SECTOR)
    n_minifat = -(-len(minifat) * 4 // SECTOR)
    n_mini = -(-len(mini) // SECTOR)
    n_big = [-(-e["size"] // SECTOR) for e in big]
    other = n_dir + n_minifat + n_mini + sum(n_big)
    n_fat = 1
    while n_fat * (SECTOR // 4) < other + n_fat:
        n_fat += 1
    if n_fat > 109:
        raise ValueError("the writer has no DIFAT sectors: keep files under about 6.8 MiB")
    fat = [FREESECT] * (n_fat * SECTOR // 4)
    fat[:n_fat] = [FATSECT] * n_fat
    # Layout after the FAT: directory, mini FAT, mini stream, then each large stream.
    pos = n_fat
    dir_start = pos
    _chain(fat, pos, n_dir)
    pos += n_dir
    minifat_start = pos if n_minifat else ENDOFCHAIN
    _chain(fat, pos, n_minifat)
    pos += n_minifat
    entries[0]["start"], entries[0]["size"] = (pos if n_mini else ENDOFCHAIN), len(mini)
    _chain(fat, pos, n_mini)
    pos += n_mini
    for e, count in zip(big, n_big):
        e["start"] = pos
        _chain(fat, pos, count)
        pos += count

    def pad(data: bytes, fill: bytes = b"\0") -> bytes:
        return data + fill * ((-len(data) % SECTOR) // len(fill))

    directory = b"".join(
        struct.pack("<64sHBBIII16sIQQIQ", (e["name"] + "\0").encode("utf-16-le"), 2 * len(e["name"]) + 2,
                    ROOT if i == 0 else STORAGE if isinstance(e["node"], dict) else STREAM, BLACK,
                    e["left"], e["right"], e["child"], b"\0" * 16, 0, 0, 0, e["start"], e["size"])
        for i, e in enumerate(entries))
    # Unused entries: empty name, no siblings or child (MS-CFB 2.6.3).
    unused = struct.pack("<64sHBBIII16sIQQIQ", b"", 0, 0, 0, NOSTREAM, NOSTREAM, NOSTREAM, b"\0" * 16, 0, 0, 0, 0, 0)
    directory += unused * ((-len(directory) % SECTOR) // 128)
    header = struct.pack("<8s16sHHHHH6sIIIIIIIII", CFB_MAGIC, b"\0" * 16, 0x3E, 3, 0xFFFE, 9, 6, b"\0" * 6,
                         0, n_fat, dir_start, 0, MINI_CUTOFF, minifat_start, n_minifat, ENDOFCHAIN, 0)
    header += struct.pack("<109I", *(list(range(n_fat)) + [FREESECT] * (109 - n_fat)))
    body = [struct.pack(f"<{len(fat)}I", *fat), directory,
            pad(struct.pack(f"<{len(minifat)}I", *minifat), b"\xff\xff\xff\xff"), pad(bytes(mini))]
    body += [pad(e["node"]) for e in big]
    return header + b"".join(body)


def _props(kind: str, streams: Tree, fixed: Sequence[Tuple[int, int]], counts: Tuple[int, int] = (0, 0)) -> bytes:
    """``__properties_version1.0``: a header by ``kind``, then one 16-byte entry per property.

    Fixed-size values (PtypInteger32 ``0003``, PtypTime ``0040``) are stored in the entry;
    strings and binaries give their stream's size; an embedded message (``000D``) gives none.
    """
    if kind in ("message", "embedded"):
        out = bytearray(8) + struct.pack("<4I", counts[0], counts[1], *counts)
        out += bytes(8) if kind == "message" else b""  # 32-byte header at top level, 24 embedded
    else:
        out = bytearray(8)  # recipients and attachments
    flags = 0x6  # PROPATTR_READABLE | PROPATTR_WRITABLE
    for tag, value in fixed:
        fmt = "<IIQ" if tag & 0xFFFF == 0x0040 else "<IIi4x"
        out += struct.pack(fmt, tag, flags, value)
    for name, data in streams.items():
        if name.startswith("__substg1.0_"):
            tag = int(name[12:20], 16)
            size = 0xFFFFFFFF if isinstance(data, dict) else len(data) + (2 if tag & 0xFFFF == 0x001F else 0)
            out += struct.pack("<IIII", tag, flags, size, 0)
    return bytes(out)


def _string(tag: str, text: Optional[str]) -> Tree:
    return {} if text is None else {f"__substg1.0_{tag}001F": text.encode("utf-16-le")}


def _filetime(when: dt.datetime) -> int:
    return int((when.timestamp() + 11644473600) * 10_000_000)  # 100 ns ticks since 1601-01-01


def message_tree(*, subject: Optional[str] = "Quarterly report",
                 sender: Optional[Tuple[str, str]] = ("Zoë Ångström", "zoe@example.org"),
                 to: Sequence[Tuple[str, str]] = (("", "team@example.org"),), cc: Sequence[Tuple[str, str]] = (),
                 body: Optional[str] = "Hello team,\r\nnumbers attached.", html: Optional[str] = None,
                 rtf: Optional[bytes] = None,
                 date: Optional[dt.datetime] = dt.datetime(2026, 11, 30, 10, 0, tzinfo=dt.timezone.utc),
                 message_id: Optional[str] = None, headers: Optional[str] = None,
                 attachments: Sequence[Union[Tuple[str, bytes, str], Embedded]] = (),
                 embedded: bool = False) -> Tree:
    """The storage tree of one message; see :func:`msg_bytes` for the arguments."""
    tree: Tree = {**_string("001A", "IPM.Note"), **_string("0037", subject), **_string("1000", body),
                  **_string("007D", headers), **_string("1035", message_id)}
    if sender is not None:
        tree.update({**_string("0C1A", sender[0]), **_string("0C1F", sender[1]), **_string("5D01", sender[1])})
    tree.update(_string("0E04", "; ".join(n or a for n, a in to) or None))
    tree.update(_string("0E03", "; ".join(n or a for n, a in cc) or None))
    if html is not None:
        tree["__substg1.0_10130102"] = html.encode("utf-8")
    if rtf is not None:  # PR_RTF_COMPRESSED, LZFu-compressed by compressed_rtf (an extract-msg dependency)
        import compressed_rtf

        tree["__substg1.0_10090102"] = compressed_rtf.compress(rtf, compressed=True)
    fixed = [(0x0E070003, 1)]  # PR_MESSAGE_FLAGS: read, and sent (MSGFLAG_UNSENT clear)
    if not embedded:
        fixed.append((0x340D0003, 0x40000))  # PR_STORE_SUPPORT_MASK: STORE_UNICODE_OK
        tree["__nameid_version1.0"] = {f"__substg1.0_000{k}0102": b"" for k in (2, 3, 4)}
    if date is not None:
        fixed.append((0x00390040, _filetime(date)))  # PR_CLIENT_SUBMIT_TIME
    recipients = [(1, r) for r in to] + [(2, r) for r in cc]  # PR_RECIPIENT_TYPE: 1 To, 2 Cc
    for k, (kind, (name, address)) in enumerate(recipients):
        streams = {**_string("3001", name or address), **_string("3003", address), **_string("39FE", address)}
        streams["__properties_version1.0"] = _props("recipient", streams, [(0x0C150003, kind), (0x30000003, k)])
        tree[f"__recip_version1.0_#{k:08X}"] = streams
    for k, att in enumerate(attachments):
        if isinstance(att, Embedded):
            # Outlook names an attached message by PR_DISPLAY_NAME (its subject), with no file name.
            streams = {**_string("3001", att.name),
                       "__substg1.0_3701000D": message_tree(**{**att.fields, "embedded": True})}
            method = 5  # ATTACH_EMBEDDED_MSG
        else:
            name, data, mime = att
            streams = {**_string("3707", name), **_string("370E", mime), "__substg1.0_37010102": data}
            method = 1  # ATTACH_BY_VALUE
        streams["__properties_version1.0"] = _props("attachment", streams, [(0x37050003, method), (0x0E210003, k)])
        tree[f"__attach_version1.0_#{k:08X}"] = streams
    counts = (len(recipients), len(attachments))
    tree["__properties_version1.0"] = _props("embedded" if embedded else "message", tree, fixed, counts)
    return tree


def msg_bytes(**fields) -> bytes:
    """An Outlook ``.msg`` file.

    Args:
        subject: PR_SUBJECT. Default ``"Quarterly report"``; ``None`` leaves it out.
        sender: (display name, address). Default Zoë Ångström <zoe@example.org>.
        to: (display name, address) recipients of type To; an empty name shows the address.
            Default team@example.org.
        cc: Recipients of type Cc. Default none.
        body: PR_BODY, the plain-text body (Outlook writes CRLF line ends). ``None`` leaves it out.
        html: PR_HTML, written as UTF-8. Default none.
        rtf: PR_RTF_COMPRESSED: the RTF document, compressed here. Default none.
        date: PR_CLIENT_SUBMIT_TIME, an aware datetime. Default 2026-11-30 10:00 UTC.
        message_id: PR_INTERNET_MESSAGE_ID. Default none.
        headers: PR_TRANSPORT_MESSAGE_HEADERS, the raw RFC 5322 header block. Default none.
        attachments: ``(file name, bytes, MIME type)`` tuples, or :class:`Embedded` messages.
    """
    return cfb_bytes(message_tree(**fields))
