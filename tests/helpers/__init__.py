"""Helpers shared by several test files (the fixtures are tests/conftest.py's).

Test files import from here or from conftest, never from one another: a test
module is collected once, and importing it from another ran its module-level
code (parameter lists, skip conditions) twice, under a second name.
"""
