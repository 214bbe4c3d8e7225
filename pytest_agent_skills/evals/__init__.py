"""Skill evals: a skill's ``evals/evals.json`` run many times with and without the skill,
graded, its trigger rate measured, recorded for offline replay, and reported."""
