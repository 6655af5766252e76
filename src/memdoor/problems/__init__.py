"""Problems: one :class:`Problem` model and loaders for the formats Memdoor reads."""

from memdoor.core.problem import Problem, TestCase, TestKind

__all__ = ["Problem", "TestCase", "TestKind"]
