"""grading.judges"""
