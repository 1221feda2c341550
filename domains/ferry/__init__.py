"""The ferry domain: ``domain.pddl`` (package data) and its problem ``generator``."""
