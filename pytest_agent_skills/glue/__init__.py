"""pytest glue modules: each one thin over a library API that works without pytest."""
