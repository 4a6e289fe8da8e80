"""The generated blocks of the documentation, each rendered from the code it describes.

A block is named by a kind and its arguments, as its marker in a page writes them
(``<!-- generated: columns chunks -->``):

========================  =======================================================================
``strategies [NAME ...]`` the strategy table (name, class, unit, options, what it does), from the registry
``strategy NAME``         one strategy's options with their types, defaults and help
``columns TABLE``         an output table's columns, from its pyarrow schema
``cli COMMAND``           the flags of ``beam-chunking run``, ``inspect``, ``preview`` or ``template``
``options MODULE.CLASS``  a configuration dataclass's fields (``ParseLimits``, ``OnnxEmbedder`` ...)
``flex-parameters``       the Flex Template's parameters and the run flags they become
``spec-example``          the example spec of :mod:`beam_chunking.pipelines.spec`
========================  =======================================================================
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib
import re
import textwrap
from typing import Callable, Dict, List, Sequence

#: Sphinx roles in docstrings (``:class:`~a.b.C```): shown as code, by their last name with ``~``.
_ROLE = re.compile(r":(?:class|func|meth|attr|data|mod|exc):`(~?)([^`]+)`")


def markdown(text: str) -> str:
    """A docstring fragment as Markdown for a table cell: roles and double backticks as code,
    pipes escaped."""
    text = _ROLE.sub(lambda m: f"`{m.group(2).rsplit('.', 1)[-1] if m.group(1) else m.group(2)}`", text)
    return text.replace("``", "`").replace("|", "\\|")


def table(header: Sequence[str], rows: List[Sequence[str]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def strategies(*names: str) -> str:
    """The strategy table of the registry: every built-in strategy, or those named."""
    from beam_chunking.registry import markdown_table

    return markdown_table(list(names) or None)


def strategy(name: str) -> str:
    """One strategy: what it does, its unit, and a table of its options."""
    from beam_chunking.registry import BUILTIN, JOB_WIDE_OPTION, default_text, options, summary, unit_of

    cls = BUILTIN[name]
    unit = unit_of(cls)
    size = "no size limit" if unit == "unbounded" else f"sizes in {unit}"
    rows = []
    for o in options(cls):
        help_text = markdown(o.help)
        if o.name == JOB_WIDE_OPTION:
            help_text += " On the command line: the `--llm-*` flags."
        rows.append((f"`{o.name}`", f"`{markdown(o.type)}`", f"`{markdown(default_text(o.default))}`", help_text))
    head = f"`{name}` (`{cls.__name__}`, {size}): {summary(cls)}"
    return head + "\n\n" + table(("option", "type", "default", "what it sets"), rows)


def _type(arrow_type) -> str:
    return str(arrow_type).replace("item: ", "")


def columns(name: str) -> str:
    """The columns of output table ``name``: type, whether null is allowed, and what it holds."""
    from beam_chunking.docs.columns import COLUMNS
    from beam_chunking.transforms.write import SCHEMAS

    helps = COLUMNS[name]
    rows = [(f"`{f.name}`", f"`{_type(f.type)}`", "yes" if f.nullable else "no", helps[f.name])
            for f in SCHEMAS[name]]
    return table(("column", "type", "null", "what it holds"), rows)


def _parser(command: str) -> argparse.ArgumentParser:
    if command == "run":
        from beam_chunking.pipelines.options import ChunkingOptions

        parser = argparse.ArgumentParser(add_help=False)
        ChunkingOptions._add_argparse_args(parser)
        return parser
    module = {"inspect": "inspect", "preview": "preview", "template": "templates"}[command]
    return importlib.import_module(f"beam_chunking.pipelines.{module}").argument_parser()


def _shared_options() -> Dict[str, List[str]]:
    """Strategy options whose help differs between the strategies that have them (their
    unit and default do): option name -> those strategies."""
    from beam_chunking.registry import options, registry

    helps: Dict[str, Dict[str, str]] = {}
    for strategy, cls in registry().items():
        for o in options(cls):
            helps.setdefault(o.name, {})[strategy] = o.help
    return {name: sorted(by) for name, by in helps.items() if len(set(by.values())) > 1}


def cli(command: str) -> str:
    """The arguments of ``beam-chunking COMMAND``, as declared to its parser.

    A strategy option whose help differs between strategies (``--max-chunk-size``: characters
    or tokens, and its default) points to the strategies' own tables instead of one's help.
    """
    from beam_chunking.pipelines.options import OPTION_PREFIX

    shared = _shared_options() if command == "run" else {}
    rows = []
    for action in _parser(command)._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        name = action.option_strings[0] if action.option_strings else action.dest.upper()
        if action.nargs == 0:
            value = ""
        else:
            value = action.metavar or ("|".join(action.choices) if action.choices else "VALUE")
        help_text = markdown((action.help or "").replace("%%", "%"))
        option = action.dest[len(OPTION_PREFIX):] if action.dest.startswith(OPTION_PREFIX) else None
        if option in shared:
            help_text = (f"The strategy's `{option}` option; its meaning and default depend on the strategy "
                         f"(see the strategy's options). Strategies: {', '.join(shared[option])}.")
        if isinstance(action, argparse._AppendAction):
            help_text += "" if "repeatable" in help_text else " Repeatable."
        rows.append((f"`{name}`", f"`{value}`" if value else "", help_text))
    return table(("argument", "value", "what it does"), rows)


def options(path: str) -> str:
    """The fields of the configuration dataclass at ``path`` (``module.Class``): default and help."""
    from beam_chunking.registry import default_text, docstring_args

    module, _, name = path.rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    helps = docstring_args(cls)
    rows = []
    for f in dataclasses.fields(cls):
        if not f.init or f.name.startswith("_"):
            continue
        if f.default is not dataclasses.MISSING:
            default = f"`{markdown(default_text(f.default))}`"
        elif f.default_factory is not dataclasses.MISSING:
            default = f"`{markdown(default_text(f.default_factory()))}`"
        else:
            default = "required"
        rows.append((f"`{f.name}`", default, markdown(helps.get(f.name, ""))))
    return table(("option", "default", "what it sets"), rows)


def flex_parameters() -> str:
    """The Flex Template's parameters: the run flag each becomes, its kind, whether required."""
    from beam_chunking.pipelines.templates import PARAMETERS

    rows = [(f"`{p.name}`", f"`{p.flag}`" if p.flag else "the spec key `embed`", p.kind,
             "yes" if p.required else "no") for p in PARAMETERS]
    return table(("parameter", "becomes", "kind", "required"), rows)


def spec_example() -> str:
    """The example spec in the docstring of :mod:`beam_chunking.pipelines.spec`, as a YAML block."""
    from beam_chunking.pipelines import spec

    body = (spec.__doc__ or "").split("Example::", 1)[1].split("\n\n", 2)[1]
    return "```yaml\n" + textwrap.dedent(body).strip("\n") + "\n```"


#: Block kinds, as markers name them.
KINDS: Dict[str, Callable[..., str]] = {
    "strategies": strategies,
    "strategy": strategy,
    "columns": columns,
    "cli": cli,
    "options": options,
    "flex-parameters": flex_parameters,
    "spec-example": spec_example,
}


def render(name: str) -> str:
    """The content of the block named ``name`` (``"columns chunks"``)."""
    kind, *args = name.split()
    if kind not in KINDS:
        raise ValueError(f"unknown generated block {kind!r} (kinds: {', '.join(KINDS)})")
    return KINDS[kind](*args)
