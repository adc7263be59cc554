"""`skopt lsp`: a language server for `.skopt` recipes (pygls), a client of the compiler.

Diagnostics come from `compile_recipe` over the open buffers, formatting from `format_recipe`,
and hover, completion and definition from `grammar.cursor` with `compiler.query`: nothing here
checks or formats a recipe on its own.
"""
