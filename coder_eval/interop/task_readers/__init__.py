"""Other tools' tasks read as coder_eval tasks: Harbor task directories (``harbor``, ``harbor_scripts``)."""
