"""planscope collector: OTLP ingest, spool, ClickHouse writer, query API."""
