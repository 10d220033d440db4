"""A test pack of one module exercise, appendix E's LoRA (``LoRALayer``, ``LinearWithLoRA``),
checked with the declarative ``same_module_as_reference``: ``checks`` (judge side, with the
book's classes in ``oracle``, judge-only), ``probes`` and ``models`` (worker side), the stub in
``stubs/``; the solution and the corpus lie beside the package."""
