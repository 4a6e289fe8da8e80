"""Flex Template entry point (FLEX_TEMPLATE_PYTHON_PY_FILE): launch the chunking job.

The launcher VM runs ``python main.py --input=... --output=... [Dataflow options]``; see
:mod:`beam_chunking.pipelines.templates` for the parameters and templates/README.md for the
build and run commands.
"""
from beam_chunking.pipelines.templates import flex_console_main

if __name__ == "__main__":
    flex_console_main()
