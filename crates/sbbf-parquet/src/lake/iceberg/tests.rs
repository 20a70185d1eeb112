//! Tests of the Iceberg reader.
