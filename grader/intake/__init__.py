"""Intake: turning what a student hands in (a folder, loose files, a notebook) into a
``Submission``, the exercise files the judge grades. Nothing here runs student code."""
