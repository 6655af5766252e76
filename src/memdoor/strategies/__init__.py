"""Team topologies: single, parallel, sequential, shared, hybrid."""
