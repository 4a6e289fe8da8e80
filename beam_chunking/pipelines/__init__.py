"""Pipelines: options, the declarative spec, the chunk-documents job and the CLI."""
