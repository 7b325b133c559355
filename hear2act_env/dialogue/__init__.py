"""The dialogue layer: action parsing, question matching, user engine, realizer."""
