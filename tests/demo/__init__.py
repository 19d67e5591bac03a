"""Tests for the pure-Python bundle generators and converters in demo/ and bench/."""
