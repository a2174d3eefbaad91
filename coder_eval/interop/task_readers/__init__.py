"""Other tools' tasks read as coder_eval tasks: Harbor task directories (``harbor``) and Terminal-Bench
task folders in their older layout (``terminal_bench``)."""
