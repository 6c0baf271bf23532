"""store_probe: seed 000's conditional-write benchmark measured on a real object store (S3, Azure Blob, GCS)."""
