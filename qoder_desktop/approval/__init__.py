"""The approval broker, questions and the decisions that answer them."""
