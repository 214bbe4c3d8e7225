"""The documents evals write: one typed model per JSON file, its JSON Schema shipped in the
package (``schemas/<name>.schema.json``), read and written through :mod:`.document_io`."""
