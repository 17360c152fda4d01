"""`python -m svmkit ...`: the `svmkit` command."""

from svmkit.cli.main import program

program()
