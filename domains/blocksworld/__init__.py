"""The blocksworld domain: ``domain.pddl`` (package data) and its problem ``generator``."""
