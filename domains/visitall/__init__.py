"""The visitall domain: ``domain.pddl`` (package data) and its problem ``generator``."""
