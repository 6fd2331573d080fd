"""Every write a person or a job triggers: sources and collections
(`sources`), documents (`documents`: ingest, metadata, removal, reprocess) and
adding uploads, web pages and papers (`adding`)."""
