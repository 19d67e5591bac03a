"""grading.reports"""
