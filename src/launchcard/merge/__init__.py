"""Merge every source's declarations about a model into one launch card."""

from launchcard.merge._cache import BuildCache, code_fingerprint, key_of
from launchcard.merge._corpus import CorpusResult, build_corpus, subject_for
from launchcard.merge._merge import UNPINNED, belongs, merge_card
from launchcard.merge._registry import adapters
from launchcard.merge._vllm import recipe_extract, variant_env

__all__ = ["UNPINNED", "BuildCache", "CorpusResult", "adapters", "belongs", "build_corpus", "code_fingerprint",
           "key_of", "merge_card", "recipe_extract", "subject_for", "variant_env"]
