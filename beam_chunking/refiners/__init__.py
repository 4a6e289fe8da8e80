"""Post-chunking passes: ``refine(doc, chunks) -> chunks`` (new chunks, never mutated ones)."""
from beam_chunking.refiners.sanitise import Sanitiser
from beam_chunking.refiners.semantic import Refined, SemanticRefiner

__all__ = ["Refined", "Sanitiser", "SemanticRefiner"]
