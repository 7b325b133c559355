"""Evaluation: rollouts, pure metrics, bootstrap statistics, tables."""
