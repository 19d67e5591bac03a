"""Scale benchmarks for evalsite: data generators and timing scripts (no Django here)."""
