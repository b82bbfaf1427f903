"""The generated adaptive kernels of the registry models (written by ``python -m ecocc.dde.codegen``, i.e.
:func:`ecocc.dde.codegen.ship`; do not edit) and their index, shipped so that setup.py compiles them at
install time (:func:`ecocc.dde.aot.compile_shipped`)."""
