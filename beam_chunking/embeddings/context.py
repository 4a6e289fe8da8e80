"""What gets embedded for a chunk: its text, or its text in a context template.

A template such as ``"{title}\\n{section_path}\\n\\n{text}"`` puts the document's title and
the chunk's heading path before its text, for the embedding model only: the chunk's ``text``
column stays the exact span of its document. Fields:

- ``{text}``: the chunk's text (required: a template without it would embed no chunk);
- ``{title}``: the document's ``title`` metadata, else its file name without the extension;
- ``{section_path}``: the chunk's heading path joined with ``" > "``;
- ``{uri}``: the document's URI;
- any other name: that key of the chunk's metadata (``{heading}``, ``{page}``, ``{author}``
  ...), as text; a key the chunk lacks gives an empty string.

Blank lines left by empty fields are kept as they are: the template is applied as written.
"""
from __future__ import annotations

import posixpath
import string
from typing import Any, Mapping, Optional

from beam_chunking.errors import ConfigError

#: Joins the heading path in ``{section_path}``.
PATH_SEPARATOR = " > "


def check_context(template: Any, where: str = "embed.context") -> Optional[str]:
    """``template`` when it is ``None`` or a valid context template (see the module doc).

    Raises:
        ConfigError: not a string, no ``{text}`` field, a malformed brace, or a field with
            a conversion, a format spec, an attribute or an index (``{page:03d}``,
            ``{a.b}``): fields are plain names.
    """
    if template is None:
        return None
    if not isinstance(template, str):
        raise ConfigError(f"{where}: expected a template string such as '{{title}}\\n\\n{{text}}', got {template!r}")
    try:
        fields = [(name, spec, conv) for _, name, spec, conv in string.Formatter().parse(template) if name is not None]
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc} in {template!r} (write {{{{ and }}}} for literal braces)") from None
    for name, spec, conv in fields:
        if not name.isidentifier() or spec or conv:
            raise ConfigError(f"{where}: field {{{name}{'!' + conv if conv else ''}{':' + spec if spec else ''}}} "
                              f"must be a plain name such as {{title}}")
    if "text" not in {name for name, _, _ in fields}:
        raise ConfigError(f"{where}: the template has no {{text}} field, so no chunk's text would be embedded")
    return template


class _Fields(dict):
    def __missing__(self, key: str) -> str:
        return ""


def render_context(template: Optional[str], text: str, metadata: Mapping[str, Any], uri: str) -> str:
    """The string embedded for a chunk of ``text`` with ``metadata`` from document ``uri``:
    ``text`` itself without a template."""
    if template is None:
        return text
    path = metadata.get("section_path") or ()
    title = metadata.get("title")
    if not title:
        title = posixpath.splitext(posixpath.basename(uri.rstrip("/")))[0]
    fields = _Fields({k: "" if v is None else str(v) for k, v in metadata.items()})
    fields.update(text=text, title=str(title), uri=uri,
                  section_path=PATH_SEPARATOR.join(map(str, path)) if not isinstance(path, str) else path)
    return template.format_map(fields)
