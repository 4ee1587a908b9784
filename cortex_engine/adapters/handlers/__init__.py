"""The `cortex` sub-commands' handlers, one module per `cortex --help` group; `cli.COMMANDS` names them.

Standard library only at import: `cli` imports every handler to build its table, and hooks run `cli`.
"""
