"""The offline extractor's sentence rules, one module per kind of fact.

``registry`` lists the rules and runs them over a sentence (``sentence_candidates``) or over
an existing card's body read back in the first person (``card_slots``); ``base`` holds what
every rule shares; ``lexicon`` and ``text`` are the vocabulary and the text helpers.
"""
